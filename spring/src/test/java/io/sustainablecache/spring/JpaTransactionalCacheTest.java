package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.CacheSettings;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.testing.InMemoryStore;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.persistenceunit.PersistenceManagedTypes;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * Issue 21 with JPA: Spring's {@link JpaTransactionManager} and Hibernate over H2. A
 * {@code @Transactional} method changes an entity and evicts its key ({@code @CacheEvict}); a
 * {@code @Cacheable(sync = true)} read on another thread between the evict and the commit reads
 * the old row. After the commit the new title is read in every round; without transaction
 * awareness in every round the old one.
 */
final class JpaTransactionalCacheTest {

  private static final int ROUNDS = 6;

  /** A row of {@link BookTable}'s table. */
  @Entity
  @Table(name = "book")
  public static class Book {
    @Id
    private Long id;
    private String title;

    protected Book() {}

    Book(long id, String title) {
      this.id = id;
      this.title = title;
    }

    String title() {
      return title;
    }

    void retitle(String title) {
      this.title = title;
    }
  }

  /** The service: cached reads, transactional writes through the entity manager. */
  static class Books {
    @PersistenceContext
    private EntityManager entityManager;
    private final AtomicReference<Runnable> beforeCommit = new AtomicReference<>(() -> {});

    public void beforeCommit(Runnable action) {
      beforeCommit.set(action);
    }

    @Cacheable(cacheNames = "titles", sync = true)
    public String title(long id) {
      return entityManager.find(Book.class, id).title();
    }

    @Transactional
    public void add(long id, String title) {
      entityManager.persist(new Book(id, title));
    }

    @Transactional
    @CacheEvict(cacheNames = "titles", key = "#p0")
    public void rename(long id, String title) {
      entityManager.find(Book.class, id).retitle(title);
      BookTable.beforeCommit(beforeCommit.get());
    }
  }

  /** The transaction around the caching advice, so that the evict runs inside it. */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  @EnableCaching(order = 1)
  static class App {
    @Bean
    LocalContainerEntityManagerFactoryBean entityManagerFactory(BookTable table) {
      LocalContainerEntityManagerFactoryBean factory = new LocalContainerEntityManagerFactoryBean();
      factory.setDataSource(table.dataSource());
      factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
      factory.setManagedTypes(PersistenceManagedTypes.of(Book.class.getName()));
      Properties jpa = new Properties();
      jpa.setProperty("hibernate.hbm2ddl.auto", "none");
      factory.setJpaProperties(jpa);
      return factory;
    }

    @Bean
    PlatformTransactionManager transactionManager(jakarta.persistence.EntityManagerFactory emf) {
      return new JpaTransactionManager(emf);
    }

    @Bean
    Books books() {
      return new Books();
    }
  }

  @ParameterizedTest(name = "transactionAware({0})")
  @ValueSource(booleans = {true, false})
  void anEntityChangedAndEvictedInATransaction_aReadBeforeTheCommit_isStaleOnlyWithoutAwareness(
      boolean transactionAware) {
    try (BookTable table = new BookTable();
        SustainableCacheManager manager = SustainableCacheManager.builder(InMemoryStore.create())
            .defaults(CacheSpec.builder()
                .settings(CacheSettings.parse("ttl=1m"))
                .codec(ValueCodec.utf8(), String.class).build())
            .transactionAware(transactionAware)
            .build();
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean("cacheManager", SustainableCacheManager.class, () -> manager);
      context.registerBean(BookTable.class, () -> table);
      context.register(App.class);
      context.refresh();
      Books books = context.getBean(Books.class);
      int stale = 0;
      for (long id = 1; id <= ROUNDS; id++) {
        long key = id;
        books.add(key, "old " + key);
        assertThat(books.title(key)).isEqualTo("old " + key);
        AtomicReference<String> during = new AtomicReference<>();
        books.beforeCommit(() -> during.set(table.readElsewhere(() -> books.title(key))));
        books.rename(key, "new " + key);
        assertThat(during).as("the racing read, before the commit").hasValue("old " + key);
        if (!books.title(key).equals("new " + key)) {
          stale++;
        }
      }
      assertThat(stale).as("stale rounds").isEqualTo(transactionAware ? 0 : ROUNDS);
    }
  }
}
