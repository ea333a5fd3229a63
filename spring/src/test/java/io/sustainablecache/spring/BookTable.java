package io.sustainablecache.spring;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A table of book titles in an in-memory H2 database of its own, with Spring's {@link
 * DataSourceTransactionManager} over it, and a thread for the reads that race a transaction.
 * Close it after the test.
 */
final class BookTable implements AutoCloseable {

  private final DataSource dataSource;
  private final JdbcTemplate jdbc;
  private final DataSourceTransactionManager transactions;
  private final AtomicInteger queries = new AtomicInteger();
  private final ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "racing-reader");
    t.setDaemon(true);
    return t;
  });

  BookTable() {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:books-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    this.dataSource = h2;
    this.jdbc = new JdbcTemplate(h2);
    this.transactions = new DataSourceTransactionManager(h2);
    jdbc.execute("create table book (id bigint primary key, title varchar(200) not null)");
  }

  DataSource dataSource() {
    return dataSource;
  }

  DataSourceTransactionManager transactionManager() {
    return transactions;
  }

  /** A template of the given propagation ({@link TransactionDefinition} constants). */
  TransactionTemplate template(int propagation) {
    TransactionTemplate template = new TransactionTemplate(transactions);
    template.setPropagationBehavior(propagation);
    return template;
  }

  TransactionTemplate template() {
    return template(TransactionDefinition.PROPAGATION_REQUIRED);
  }

  void insert(long id, String title) {
    jdbc.update("insert into book (id, title) values (?, ?)", id, title);
  }

  /** Updates the row, in the current transaction if there is one. */
  void update(long id, String title) {
    jdbc.update("update book set title = ? where id = ?", title, id);
  }

  /** Reads the committed row (or this thread's transaction's), counting the query. */
  String title(long id) {
    queries.incrementAndGet();
    return jdbc.queryForObject("select title from book where id = ?", String.class, id);
  }

  int queries() {
    return queries.get();
  }

  /**
   * Runs {@code read} on another thread, as another request does, and waits for it: inside a
   * transaction, it reads what is committed.
   */
  <T> T readElsewhere(Supplier<T> read) {
    try {
      return CompletableFuture.supplyAsync(read, reader).get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("the racing read failed", e);
    }
  }

  /** Runs {@code action} just before the current transaction commits (after its cache writes). */
  static void beforeCommit(Runnable action) {
    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
      @Override
      public void beforeCommit(boolean readOnly) {
        action.run();
      }
    });
  }

  @Override
  public void close() {
    reader.shutdownNow();
    jdbc.execute("shutdown");
  }
}
