package io.sustainablecache.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.cache.interceptor.SimpleKey;
import org.springframework.cache.interceptor.SimpleKeyGenerator;

/** The default key encoding: injective (no two unequal keys share a string), stable for equal keys. */
final class KeyEncoderTest {

  private final KeyEncoder keys = KeyEncoder.typeTagged();

  enum Color { RED, GREEN }

  enum Other { RED }

  record Point(int x, int y) {}

  record Named(String name, List<String> tags) {}

  record Wrapper(Object value) {}

  static final class Token implements Serializable {
    private static final long serialVersionUID = 1L;
    final String value;

    Token(String value) {
      this.value = value;
    }
  }

  static final class Opaque {
    @Override
    public String toString() {
      return "opaque";
    }
  }

  /** Every pair of these keys is unequal, and so must encode differently. */
  private List<Object> adversarialKeys() {
    return List.of(
        // strings against numbers and each other
        "1", 1, 1L, (short) 1, (byte) 1, 1.0, 1.0f, BigInteger.ONE, new BigDecimal("1"),
        new BigDecimal("1.0"), '1', "i1;", "l1;", "s1:1", "",
        // separators inside strings
        "a,b", "a", "b", "a:b", "s1:a", "(", ")", ";", "a b", "a#b", "n", "T",
        // SimpleKey flattening: ("a,b") vs ("a", "b"), ("a", "b,c") vs ("a,b", "c")
        new SimpleKey("a,b"), new SimpleKey("a", "b"), new SimpleKey("a", "b,c"),
        new SimpleKey("a,b", "c"), new SimpleKey("s1:a"), new SimpleKey("a", null),
        new SimpleKey(null, "a"), new SimpleKey((Object) null), SimpleKey.EMPTY,
        new SimpleKey(1, 2), new SimpleKey("1", "2"), new SimpleKey(1L, 2),
        new SimpleKey(new SimpleKey("a", "b")), new SimpleKey(List.of("a", "b")),
        new SimpleKey((Object) new String[] {"a", "b"}), new SimpleKey(new int[] {1, 2}),
        new SimpleKey(new long[] {1, 2}), new SimpleKey((Object) new int[0]),
        new SimpleKey((Object) new long[0]),
        // collections
        List.of("a", "b"), List.of("a,b"), List.of(List.of("a"), "b"), List.of(), Set.of(),
        Set.of("a", "b"), Map.of("a", "b"), Map.of("a,b", ""), Map.of("a", List.of("b")),
        Optional.empty(), Optional.of("a"), Optional.of(Optional.empty()),
        // enums of different types with the same name
        Color.RED, Other.RED, Color.GREEN, "RED",
        // records
        new Point(1, 2), new Point(2, 1), new Point(12, 1), new Point(1, 21),
        new Named("a", List.of("b")), new Named("a,b", List.of()), new Named("a", List.of()),
        new Wrapper("a"), new Wrapper(1), new Wrapper(null),
        // others
        UUID.fromString("00000000-0000-0000-0000-000000000001"),
        UUID.fromString("00000000-0000-0000-0000-000000000002"), LocalDate.of(2024, 1, 2),
        Instant.ofEpochSecond(0), DayOfWeek.MONDAY, true, false, "true",
        new Token("a"), new Token("b"),
        -0.0, 0.0, Double.NaN, Float.NaN, 0.0f);
  }

  @Test
  void unequalKeysNeverShareAnEncoding() {
    List<Object> all = adversarialKeys();
    Map<String, Object> byEncoding = new HashMap<>();
    for (Object key : all) {
      Object previous = byEncoding.put(keys.encode(key), key);
      if (previous != null) {
        assertThat(deepEquals(previous, key))
            .as("%s and %s share the encoding %s", describe(previous), describe(key),
                keys.encode(key))
            .isTrue();
      }
    }
    assertThat(byEncoding).hasSize(all.size());
  }

  @Test
  void theSpringKeyGeneratorsMultiParameterKeysDoNotCollide() {
    // what @Cacheable builds for m(String, String) called with ("a,b", "c") and ("a", "b,c")
    Object first = SimpleKeyGenerator.generateKey("a,b", "c");
    Object second = SimpleKeyGenerator.generateKey("a", "b,c");
    assertThat(first).isNotEqualTo(second);
    assertThat(keys.encode(first)).isNotEqualTo(keys.encode(second));
    assertThat(keys.encode(new SimpleKey("a,b"))).isNotEqualTo(keys.encode(new SimpleKey("a", "b")));
    assertThat(keys.encode(SimpleKeyGenerator.generateKey())).isEqualTo("K0()");
  }

  @Test
  void readableEncodings() {
    assertThat(keys.encode("42")).isEqualTo("s2:42");
    assertThat(keys.encode(42)).isEqualTo("i42;");
    assertThat(keys.encode(42L)).isEqualTo("l42;");
    assertThat(keys.encode(new SimpleKey("a", 1))).isEqualTo("K2(s1:ai1;)");
    assertThat(keys.encode(DayOfWeek.MONDAY)).isEqualTo("es19:java.time.DayOfWeeks6:MONDAY");
    assertThat(keys.encode(new BigDecimal("1.50"))).isEqualTo("D1.50;");
  }

  @Test
  void equalKeysOfDifferentImplementationsShareAnEncoding() {
    assertThat(keys.encode(new ArrayList<>(List.of("a", "b"))))
        .isEqualTo(keys.encode(new LinkedList<>(List.of("a", "b"))));
    Set<String> hash = new HashSet<>(List.of("z", "a", "m", "b", "y"));
    Set<String> linked = new LinkedHashSet<>(List.of("y", "b", "m", "a", "z"));
    assertThat(keys.encode(hash)).isEqualTo(keys.encode(linked))
        .isEqualTo(keys.encode(new TreeSet<>(hash)));
    Map<String, Integer> map = new HashMap<>(Map.of("a", 1, "b", 2, "c", 3));
    assertThat(keys.encode(map)).isEqualTo(keys.encode(new TreeMap<>(map)));
    assertThat(keys.encode(new SimpleKey((Object) new int[] {1, 2})))
        .isEqualTo(keys.encode(new SimpleKey((Object) new int[] {1, 2})));
    assertThat(keys.encode(new Token("a"))).isEqualTo(keys.encode(new Token("a")));
    assertThat(keys.encode(Double.NaN)).isEqualTo(keys.encode(0.0 / 0.0));
  }

  @Test
  void randomKeysAreInjective() {
    Random random = new Random(20240601);
    Map<String, Object> byEncoding = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      Object key = randomKey(random, 0);
      if (key == null) {
        continue; // Spring never passes a null key
      }
      String encoded = keys.encode(key);
      assertThat(keys.encode(key)).isEqualTo(encoded);
      Object previous = byEncoding.putIfAbsent(encoded, key);
      if (previous != null) {
        assertThat(deepEquals(previous, key))
            .as("%s and %s share %s", describe(previous), describe(key), encoded).isTrue();
      }
    }
    assertThat(byEncoding.size()).isGreaterThan(2_000); // many distinct keys, many repeats
  }

  /** Small alphabets on purpose, including the encoding's own separators, to provoke collisions. */
  private static Object randomKey(Random r, int depth) {
    int kind = r.nextInt(depth > 2 ? 6 : 9);
    switch (kind) {
      case 0:
        return randomString(r);
      case 1:
        return r.nextInt(21) - 10;
      case 2:
        return (long) (r.nextInt(21) - 10);
      case 3:
        return r.nextBoolean() ? null : Color.values()[r.nextInt(2)];
      case 4:
        return "1as;:(),".charAt(r.nextInt(8));
      case 5:
        return r.nextBoolean() ? r.nextInt(3) * 0.5 : new BigDecimal(r.nextInt(3) + "." + r.nextInt(2));
      case 6: {
        Object[] params = new Object[r.nextInt(4)];
        for (int i = 0; i < params.length; i++) {
          params[i] = randomKey(r, depth + 1);
        }
        return new SimpleKey(params);
      }
      case 7: {
        List<Object> list = new ArrayList<>();
        for (int i = r.nextInt(3); i > 0; i--) {
          list.add(randomKey(r, depth + 1));
        }
        return r.nextBoolean() ? list : new Wrapper(list);
      }
      default:
        return new Point(r.nextInt(3), r.nextInt(3));
    }
  }

  private static String randomString(Random r) {
    String alphabet = "a1s;:(),K#n ";
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(5); i > 0; i--) {
      b.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return b.toString();
  }

  private static boolean deepEquals(Object a, Object b) {
    return Arrays.deepEquals(new Object[] {a}, new Object[] {b});
  }

  private static String describe(Object o) {
    return o == null ? "null" : o.getClass().getSimpleName() + " " + (o.getClass().isArray()
        ? Arrays.deepToString(new Object[] {o}) : String.valueOf(o));
  }

  @Test
  void objectsWithoutAnInjectiveEncodingAreRefusedWithTheirType() {
    assertThatThrownBy(() -> keys.encode(new Opaque()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(Opaque.class.getName())
        .hasMessageContaining("record");
    assertThatThrownBy(() -> keys.encode(new SimpleKey("a", new Opaque())))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void cyclesAreRefused() {
    List<Object> self = new ArrayList<>();
    self.add(self);
    assertThatThrownBy(() -> keys.encode(self))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nested");
  }
}
