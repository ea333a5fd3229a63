package io.sustainablecache.hibernate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;
import java.lang.reflect.Constructor;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.hibernate.bytecode.enhance.spi.LazyPropertyInitializer;
import org.hibernate.cache.spi.entry.StandardCacheEntryImpl;
import org.junit.jupiter.api.Test;

/** The region codec: every allow-listed type round-trips; anything else, and bad bytes, fail. */
final class EntryCodecTest {

  private final EntryCodec codec = new EntryCodec(new MappingFingerprints(name -> "mapping of " + name),
      getClass().getClassLoader());

  private static StandardCacheEntryImpl entry(String subclass, Object version,
      Serializable... state) throws ReflectiveOperationException {
    Constructor<StandardCacheEntryImpl> c = StandardCacheEntryImpl.class.getDeclaredConstructor(
        Serializable[].class, String.class, Object.class);
    c.setAccessible(true);
    return c.newInstance(state, subclass, version);
  }

  private StandardCacheEntryImpl roundTrip(StandardCacheEntryImpl entry) {
    byte[] bytes = codec.encode(entry);
    byte[] framed = new byte[bytes.length + 3];
    System.arraycopy(bytes, 0, framed, 2, bytes.length);
    return (StandardCacheEntryImpl) codec.decode(framed, 2, bytes.length);
  }

  @Test
  void everyAllowListedType_roundTrips() throws ReflectiveOperationException {
    java.sql.Timestamp timestamp = new java.sql.Timestamp(1_700_000_000_123L);
    timestamp.setNanos(123_456_789);
    Serializable[] state = {null, "text ü", 1, 2L, (short) 3, (byte) 4, true, 'c', 1.5f, 2.5d,
        new BigDecimal("-12.3400"), new BigInteger("123456789012345678901234567890"),
        UUID.randomUUID(), new byte[] {1, 2}, new char[] {'a', 'b'}, LocalDate.of(2030, 1, 31),
        LocalTime.of(12, 30, 1, 5), LocalDateTime.of(2030, 1, 31, 12, 30),
        Instant.ofEpochSecond(1_700_000_000L, 7), OffsetDateTime.of(2030, 1, 31, 1, 2, 3, 4,
            ZoneOffset.ofHours(9)), ZonedDateTime.of(2030, 3, 31, 2, 30, 0, 0,
            ZoneId.of("Europe/Berlin")), OffsetTime.of(1, 2, 3, 4, ZoneOffset.UTC),
        Duration.ofMillis(1500), new java.sql.Date(86_400_000L), new java.sql.Time(3_600_000L),
        timestamp, new java.util.Date(1234L), RwCoupon.Status.USED,
        new Object[] {1L, "composite", new Object[] {2}}, new String[] {"a", null},
        new Serializable[] {4L}, LazyPropertyInitializer.UNFETCHED_PROPERTY};

    StandardCacheEntryImpl back = roundTrip(entry("io.example.Coupon", 3, state));

    assertThat(back.getSubclass()).isEqualTo("io.example.Coupon");
    assertThat(back.getVersion()).isEqualTo(3);
    assertThat(back.getDisassembledState()).hasSameSizeAs(state);
    for (int i = 0; i < state.length; i++) {
      Object expected = state[i];
      Object actual = back.getDisassembledState()[i];
      if (expected instanceof Object[] array) {
        assertThat(actual).isInstanceOf(array.getClass());
        assertThat(Arrays.deepEquals((Object[]) actual, array)).as("index %d", i).isTrue();
      } else {
        assertThat(actual).as("index %d", i).isEqualTo(expected);
        assertThat(actual == null ? null : actual.getClass()).as("index %d", i)
            .isEqualTo(expected == null ? null : expected.getClass());
      }
    }
    assertThat(back.getDisassembledState()[state.length - 1])
        .isSameAs(LazyPropertyInitializer.UNFETCHED_PROPERTY);
  }

  @Test
  void collectionsAndNaturalIds_roundTrip_andAnotherMappingOfTheirsDoesNotDecode() {
    CollectionValue tags = new CollectionValue("io.example.Shop.tags",
        new Serializable[] {"a", null, 3L});
    byte[] bytes = codec.encode(tags);
    CollectionValue back = (CollectionValue) codec.decode(bytes, 0, bytes.length);
    assertThat(back.role()).isEqualTo(tags.role());
    assertThat(back.state()).containsExactly("a", null, 3L);
    assertThat(back.toEntry().getState()).containsExactly("a", null, 3L);

    byte[] naturalId = codec.encode(new NaturalIdValue("io.example.Shop", 42L));
    assertThat(codec.decode(naturalId, 0, naturalId.length))
        .isEqualTo(new NaturalIdValue("io.example.Shop", 42L));

    EntryCodec changed = new EntryCodec(new MappingFingerprints(name -> "changed " + name),
        getClass().getClassLoader());
    assertThatThrownBy(() -> changed.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> changed.decode(naturalId, 0, naturalId.length))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void queryResultsAndTimestamps_roundTrip_andResultsOfAnotherMappingDoNotDecode() {
    Object item = QueryItems.item(1234L, List.of(new Object[] {1L, "A"}, new Object[] {2L, "B"}));
    byte[] bytes = codec.encode(item);
    Object back = codec.decode(bytes, 0, bytes.length);
    assertThat(QueryItems.timestamp(back)).isEqualTo(1234L);
    assertThat(QueryItems.results(back)).hasSize(2);
    assertThat((Object[]) QueryItems.results(back).get(1)).containsExactly(2L, "B");

    byte[] timestamp = codec.encode(99L);
    assertThat(codec.decode(timestamp, 0, timestamp.length)).isEqualTo(99L);

    EntryCodec changed = new EntryCodec(new MappingFingerprints(name -> "changed " + name),
        getClass().getClassLoader());
    assertThatThrownBy(() -> changed.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aTypeOffTheAllowList_isNotEncoded() throws ReflectiveOperationException {
    StandardCacheEntryImpl entry = entry("io.example.Coupon", null,
        new java.util.ArrayList<>(List.of(1)));
    assertThatThrownBy(() -> codec.encode(entry)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.util.ArrayList is not on the allow-list");
    assertThatThrownBy(() -> codec.encode("a string")).isInstanceOf(
        IllegalArgumentException.class);
  }

  @Test
  void everyTruncation_andForeignBytes_failAsIllegalArgument() throws ReflectiveOperationException {
    byte[] bytes = codec.encode(entry("io.example.Coupon", 1, "code", 12L,
        new Object[] {"a", 2}, LocalDate.of(2030, 1, 1)));
    for (int length = 0; length < bytes.length; length++) {
      int cut = length;
      assertThatThrownBy(() -> codec.decode(bytes, 0, cut)).as("truncated to %d", cut)
          .isInstanceOf(IllegalArgumentException.class);
    }
    byte[] foreign = "{\"json\":true}".getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> codec.decode(foreign, 0, foreign.length))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anEntryOfAnotherMapping_doesNotDecode() throws ReflectiveOperationException {
    byte[] bytes = codec.encode(entry("io.example.Coupon", null, "code"));
    EntryCodec changed = new EntryCodec(new MappingFingerprints(name -> "another mapping of " + name),
        getClass().getClassLoader());

    assertThatThrownBy(() -> changed.decode(bytes, 0, bytes.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another version");
  }

  @Test
  void anEnumTagNamingAClassThatIsNoEnum_isRefusedWithoutInitializingIt()
      throws ReflectiveOperationException {
    byte[] bytes = codec.encode(entry("io.example.Coupon", null, RwCoupon.Status.ACTIVE));
    String enumName = RwCoupon.Status.class.getName();
    String planted = "io.sustainablecache.hibernate.PlantedNotEnums";
    assertThat(planted).hasSameSizeAs(enumName); // swapped in place, lengths unchanged
    byte[] forged = new String(bytes, StandardCharsets.ISO_8859_1).replace(enumName, planted)
        .getBytes(StandardCharsets.ISO_8859_1);

    assertThatThrownBy(() -> codec.decode(forged, 0, forged.length))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not an enum");
    assertThat(plantedInitialized).as("its static initializer never ran").isFalse();
  }

  /** Set by {@link PlantedNotEnums}'s static initializer. */
  static volatile boolean plantedInitialized;
}

/** A class named in forged bytes; its name has the length of {@code RwCoupon$Status}'s. */
final class PlantedNotEnums {
  static {
    EntryCodecTest.plantedInitialized = true;
  }

  private PlantedNotEnums() {}
}
