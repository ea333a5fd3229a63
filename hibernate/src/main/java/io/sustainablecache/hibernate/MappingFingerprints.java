package io.sustainablecache.hibernate;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.collection.CollectionPersister;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.type.BasicType;
import org.hibernate.type.CompositeType;
import org.hibernate.type.Type;

/**
 * The fingerprint of each entity's and collection's mapping, as this instance runs it: an
 * entity's name, its id's type, each property's name and type, and the version's type; a
 * collection's role and its key, index and element types; hashed (SHA-256, first 8 bytes). Every
 * instance running the same mapping computes the same fingerprint; a changed class (a property
 * added, removed, renamed or of another type) has another. Entries carry the fingerprint they
 * were written with ({@link EntryCodec}). Computed once per name; thread-safe.
 */
final class MappingFingerprints {

  /** The name under which {@link #all()} is computed. */
  static final String ALL = "all mappings";
  private static final String COLLECTION = "collection ";

  private final Function<String, String> describe;
  private final Map<String, Long> fingerprints = new ConcurrentHashMap<>();

  /**
   * Fingerprints of the texts {@code describe} gives per entity name, and per collection role
   * prefixed with {@code "collection "} (tests give their own).
   */
  MappingFingerprints(Function<String, String> describe) {
    this.describe = describe;
  }

  /** The mappings of a session factory's entities and collections. */
  static MappingFingerprints of(SessionFactoryImplementor factory) {
    return new MappingFingerprints(name -> {
      if (name.equals(ALL)) {
        List<String> all = new ArrayList<>();
        factory.getMappingMetamodel().forEachEntityDescriptor(entity -> all.add(
            describe(entity)));
        Collections.sort(all);
        return String.join("\n\n", all);
      }
      return name.startsWith(COLLECTION)
          ? describe(factory.getMappingMetamodel().getCollectionDescriptor(
              name.substring(COLLECTION.length())))
          : describe(factory.getMappingMetamodel().getEntityDescriptor(name));
    });
  }

  /**
   * The fingerprint of every entity's mapping: what a query's cached rows depend on (a query's
   * SQL alone may stay the same when a column's type changes).
   */
  long all() {
    return fingerprint(ALL);
  }

  /**
   * The fingerprint of a collection role's mapping.
   *
   * @throws RuntimeException (Hibernate's) if there is no such collection
   */
  long collectionFingerprint(String role) {
    return fingerprint(COLLECTION + role);
  }

  static String describe(CollectionPersister persister) {
    StringBuilder text = new StringBuilder(COLLECTION).append(persister.getRole());
    text.append("\nkey:");
    describe(persister.getKeyType(), text);
    if (persister.getIndexType() != null) {
      text.append("\nindex:");
      describe(persister.getIndexType(), text);
    }
    text.append("\nelement:");
    describe(persister.getElementType(), text);
    return text.toString();
  }

  /**
   * The fingerprint of an entity's mapping.
   *
   * @throws RuntimeException (Hibernate's) if there is no such entity
   */
  long fingerprint(String entityName) {
    return fingerprints.computeIfAbsent(entityName, name -> ByteBuffer.wrap(
        java.util.HexFormat.of().parseHex(StoreKeys.sha256(describe.apply(name)), 0, 16))
        .getLong());
  }

  /**
   * The text a fingerprint is the hash of: the same on every instance running the same mapping
   * (a type's name can hold a counter of the instance that built it, so it is not used).
   */
  static String describe(EntityPersister persister) {
    StringBuilder text = new StringBuilder(persister.getEntityName());
    text.append("\nid:");
    describe(persister.getIdentifierType(), text);
    describe(persister.getPropertyNames(), persister.getPropertyTypes(), text);
    if (persister.isVersioned()) {
      text.append("\nversion:");
      describe(persister.getVersionType(), text);
    }
    return text.toString();
  }

  private static void describe(String[] names, Type[] types, StringBuilder text) {
    for (int i = 0; i < names.length; i++) {
      text.append('\n').append(names[i]).append(':');
      describe(types[i], text);
    }
  }

  private static void describe(Type type, StringBuilder text) {
    text.append(type.getReturnedClass().getName());
    if (type instanceof BasicType<?> basic) {
      text.append(':').append(basic.getJdbcType().getDefaultSqlTypeCode());
    } else if (type instanceof CompositeType composite) {
      text.append('{');
      describe(composite.getPropertyNames(), composite.getSubtypes(), text);
      text.append('}');
    } else {
      text.append(':').append(type.getClass().getSimpleName());
    }
  }
}
