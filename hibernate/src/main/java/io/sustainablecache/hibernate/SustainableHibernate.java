package io.sustainablecache.hibernate;

import static java.util.Objects.requireNonNull;

import jakarta.persistence.CacheRetrieveMode;
import jakarta.persistence.FindOption;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.hibernate.CacheMode;
import org.hibernate.Session;
import org.hibernate.cache.spi.access.EntityDataAccess;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * Multi-id loading with the second-level cache in two store round trips: the cached entities of
 * many ids read with one bulk read, the rest loaded with Hibernate's one query, and cached with
 * one wave of writes. Hibernate's multi-id loader ({@code findMultiple}, {@code byMultipleIds})
 * asks the second-level cache id by id, so over a remote store each id costs a round trip (and
 * each entity it then loads a read and a write more); call {@link #findMultiple} instead of
 * {@code session.findMultiple}, or wrap such a load in {@link #prefetch}:
 *
 * <pre>{@code
 * List<Coupon> coupons = SustainableHibernate.findMultiple(session, Coupon.class, ids);
 * }</pre>
 *
 * <p>What is cached and answered is exactly what {@code session.findMultiple} caches and answers
 * over this provider: the prefetch answers Hibernate's {@code get} of each id with what the bulk
 * read found (a cached entity, or a miss), and the writes of the entities loaded are the same
 * conditional writes ({@code putLoaded}), made conditional on what the bulk read found instead of
 * a read of their own: an invalidation, a fence or its release after the bulk read keeps the
 * loaded entity out as it does for {@code findMultiple}. Entity types not cached by this provider,
 * and sessions or options that do not read the second-level cache, are loaded as {@code
 * findMultiple} loads them, without a prefetch.
 *
 * <p><b>Thread-safety:</b> a session is used by one thread; so is each call here. The prefetch is
 * bound to the calling thread for the call only, and always unbound when it returns or throws.
 * <b>Nulls:</b> arguments must not be {@code null}; ids may contain {@code null} (as {@code
 * findMultiple} takes them: not prefetched).
 */
public final class SustainableHibernate {

  private SustainableHibernate() {}

  /**
   * {@code session.findMultiple(type, ids, options)}, with the second-level cache of {@code type}
   * read for all the ids with one bulk read first (see the class description).
   *
   * @param session the session
   * @param type the entity type
   * @param ids the ids, in the order of the result; duplicates and {@code null}s as {@code
   *     findMultiple} takes them
   * @param options {@code findMultiple}'s options; one that bypasses the second-level cache
   *     ({@link CacheMode#IGNORE} or {@link CacheMode#PUT}, {@link CacheRetrieveMode#BYPASS})
   *     leaves the prefetch out
   * @param <T> the entity type
   * @return what {@code session.findMultiple} returns: the entities in the order of {@code ids},
   *     {@code null} for an id without one
   * @throws NullPointerException if {@code session}, {@code type}, {@code ids} or {@code
   *     options} is {@code null}
   * @throws RuntimeException whatever {@code findMultiple} throws (the prefetch itself throws no
   *     store failure: the keys it could not read are read by Hibernate as usual)
   */
  public static <T> List<T> findMultiple(Session session, Class<T> type, List<?> ids,
      FindOption... options) {
    requireNonNull(session, "session");
    requireNonNull(type, "type");
    requireNonNull(ids, "ids");
    requireNonNull(options, "options");
    Supplier<List<T>> find = () -> session.findMultiple(type, ids, options);
    return readsCache(options) ? prefetch(session, type, ids, find) : find.get();
  }

  /**
   * Runs {@code work} with the second-level cache of {@code type} read for {@code ids} with one
   * bulk read before: while {@code work} runs on this thread, the session's reads of those ids in
   * the cache are answered from that read, and the entities it loads are cached with writes that
   * are awaited together when {@code work} returns. For a load that reads the cache id by id,
   * such as a loop of {@code session.find} or Hibernate's multi-id loading; a query ({@code
   * select ... where id in ...}) reads no entity from the second-level cache, so gains nothing.
   *
   * @param session the session {@code work} uses
   * @param type the entity type
   * @param ids the ids to prefetch; {@code null}s and ids of another type are left out
   * @param work the load
   * @param <R> the result type
   * @return what {@code work} returns
   * @throws NullPointerException if an argument is {@code null}
   * @throws RuntimeException whatever {@code work} throws; the prefetch is unbound either way
   */
  public static <R> R prefetch(Session session, Class<?> type, Collection<?> ids,
      Supplier<R> work) {
    requireNonNull(session, "session");
    requireNonNull(type, "type");
    requireNonNull(ids, "ids");
    requireNonNull(work, "work");
    SharedSessionContractImplementor implementor =
        session.unwrap(SharedSessionContractImplementor.class);
    SessionFactoryImplementor factory = implementor.getFactory();
    EntityPersister persister = factory.getMappingMetamodel().findEntityDescriptor(type);
    if (persister == null || !persister.canReadFromCache()
        || !(persister.getCacheAccessStrategy() instanceof EntityAccess access)
        || !implementor.getCacheMode().isGetEnabled()) {
      return work.get();
    }
    Set<String> keys = keys(ids, persister, access, factory, implementor.getTenantIdentifier());
    if (keys.isEmpty()) {
      return work.get();
    }
    try (Prefetch ignored = Prefetch.open(access.cache(), implementor, keys,
        factory.getMappingMetamodel().getEntityDescriptor(persister.getRootEntityName())
            .getNavigableRole(), access.getRegion().getName())) {
      return work.get();
    }
  }

  /** The region's store keys of the ids of the identifier's type, as Hibernate makes them. */
  private static Set<String> keys(Collection<?> ids, EntityPersister persister,
      EntityDataAccess access, SessionFactoryImplementor factory, String tenant) {
    Class<?> idType = persister.getIdentifierMapping().getJavaType().getJavaTypeClass();
    Set<String> keys = new LinkedHashSet<>();
    for (Object id : ids) {
      if (idType.isInstance(id)) { // not null; another type: Hibernate coerces it, not prefetched
        keys.add(DataAccess.storeKey(access.generateCacheKey(id, persister, factory, tenant)));
      }
    }
    return keys;
  }

  /** Whether {@code findMultiple} with these options reads the session's second-level cache. */
  private static boolean readsCache(FindOption... options) {
    for (FindOption option : options) {
      if (option instanceof CacheMode mode && !mode.isGetEnabled()
          || option == CacheRetrieveMode.BYPASS) {
        return false;
      }
    }
    return true;
  }
}
