package io.sustainablecache.lab;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/**
 * The Hibernate scenario's entity ({@link HibernateScenario}): a versioned row of {@code
 * lab_item}, cached in the second-level cache with the access type of the run (Hibernate's {@code
 * hibernate.cache.default_cache_concurrency_strategy}). Its version is what the scenario checks
 * reads against. Not thread-safe (an entity, one per session).
 */
@Entity
@Cacheable
@Table(name = "lab_item")
public class LabItem {

  @Id
  Long id;
  @Version
  long version;
  String name;
  String payload;

  /** For Hibernate. */
  protected LabItem() {}

  /** The version committed last, as this instance read it. */
  long version() {
    return version;
  }

  /** Replaces the payload: the update of a writer's transaction. */
  void payload(String payload) {
    this.payload = payload;
  }
}
