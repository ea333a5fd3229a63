package com.example;

import java.util.concurrent.atomic.AtomicInteger;

/** The manual's (docs/manual.md) repository: a counting stand-in for the database. */
public class BookRepository {
  private final AtomicInteger queries = new AtomicInteger();

  /**
   * Finds a book.
   *
   * @param id the id; 0 has no book
   * @return the book, or {@code null}
   */
  public Book findById(long id) {
    queries.incrementAndGet();
    return id == 0 ? null : new Book(id, "title " + id);
  }

  /**
   * The queries so far.
   *
   * @return a count
   */
  public int queries() {
    return queries.get();
  }
}
