/**
 * Hibernate ORM 7's second-level cache over ARCUS or memcached: {@link
 * io.sustainablecache.hibernate.SustainableCacheRegionFactory}, selected with {@code
 * hibernate.cache.region.factory_class=sustainable}. One {@link io.sustainablecache.SustainableCache}
 * per region; READ_WRITE soft locks are write fences on the store; cache entries are encoded
 * with an allow-list of types, never with Java deserialization. {@link
 * io.sustainablecache.hibernate.SustainableHibernate#findMultiple} loads many ids in two store
 * round trips where Hibernate's multi-id loading takes one per id. See {@code docs/manual.md},
 * "Hibernate's second-level cache".
 */
package io.sustainablecache.hibernate;
