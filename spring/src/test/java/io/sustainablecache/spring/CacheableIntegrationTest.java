package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The annotations end to end in a plain Spring context (no Boot). */
final class CacheableIntegrationTest {

  static class BookService {
    private final AtomicInteger queries = new AtomicInteger();

    /** Read through the proxy: a field of the CGLIB proxy itself would stay null. */
    public int queries() {
      return queries.get();
    }

    @Cacheable(cacheNames = "books", sync = true)
    public String title(long id) throws IOException {
      queries.incrementAndGet();
      if (id < 0) {
        throw new IOException("no such table");
      }
      return id == 0 ? null : "title " + id;
    }

    @Cacheable(cacheNames = "books", sync = true)
    public String byAuthorAndYear(String author, int year) {
      queries.incrementAndGet();
      return author + "/" + year;
    }

    @CacheEvict(cacheNames = "books")
    public void renamed(long id) {}
  }

  static class AuthorService {
    @Cacheable(cacheNames = "authors", sync = true)
    public String name(String id) {
      return id;
    }
  }

  @Configuration
  @EnableCaching
  static class Configured {
    @Bean
    SustainableCacheManager cacheManager() {
      return SustainableCacheManager.builder(InMemoryStore.create())
          .cache("books", CacheSpec.builder().settings(CacheSettings.parse("ttl=1m"))
              .codec(ValueCodec.utf8(), String.class).build())
          .dynamic(false)
          .build();
    }

    @Bean
    static CacheNamesValidator cacheNamesValidator(SustainableCacheManager cacheManager) {
      return new CacheNamesValidator(cacheManager, "cacheManager");
    }

    @Bean
    BookService bookService() {
      return new BookService();
    }
  }

  @Configuration
  static class WithAuthors {
    @Bean
    AuthorService authorService() {
      return new AuthorService();
    }
  }

  @Test
  void syncCacheableLoadsOnceCachesNullAndRethrowsTheMethodsException() throws Exception {
    try (AnnotationConfigApplicationContext context =
        new AnnotationConfigApplicationContext(Configured.class)) {
      BookService books = context.getBean(BookService.class);
      assertThat(books.title(1)).isEqualTo("title 1");
      assertThat(books.title(1)).isEqualTo("title 1");
      assertThat(books.queries()).isEqualTo(1);
      assertThat(books.title(0)).isNull();
      assertThat(books.title(0)).isNull();
      assertThat(books.queries()).isEqualTo(2);
      assertThatThrownBy(() -> books.title(-1)).isInstanceOf(IOException.class)
          .hasMessage("no such table");
      assertThat(books.byAuthorAndYear("a", 1)).isEqualTo("a/1");
      assertThat(books.byAuthorAndYear("a", 1)).isEqualTo("a/1");
      assertThat(books.queries()).isEqualTo(4);
      books.renamed(1);
      assertThat(books.title(1)).isEqualTo("title 1");
      assertThat(books.queries()).isEqualTo(5);
      assertThat(context.getBean(CacheManager.class).getCacheNames()).containsExactly("books");
    }
  }

  @Test
  void aCacheThatCannotBeCreatedFailsTheStartNamingTheMethod() {
    assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Configured.class,
        WithAuthors.class).close())
        .hasStackTraceContaining("cache 'authors' (used by AuthorService.name) is not configured");
  }

  @SuppressWarnings("unused")
  private static final Class<?>[] REFERENCED = {BeanCreationException.class,
      UncheckedIOException.class};
}
