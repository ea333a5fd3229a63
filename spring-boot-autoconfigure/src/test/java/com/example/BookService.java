package com.example;

import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.stereotype.Service;

// README:begin
@Service
public class BookService {
  private final BookRepository repository;

  public BookService(BookRepository repository) {
    this.repository = repository;
  }

  @Cacheable(cacheNames = "books", sync = true) // sync = true: the method becomes the loader
  public Book book(long id) {
    return repository.findById(id); // null: cached as "no value" for no-value-ttl
  }

  @CacheEvict(cacheNames = "books")
  public void bookChanged(long id) {
  }
}
// README:end
