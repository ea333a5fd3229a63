package io.sustainablecache.hibernate;

/**
 * A natural id's cached resolution as a region stores it: the entity (whose mapping's
 * fingerprint the entry carries) and its id. Immutable.
 *
 * @param entityName the root entity's name
 * @param id the entity's id (an id of a type off the codec's allow-list is not cached)
 */
record NaturalIdValue(String entityName, Object id) {}
