package io.sustainablecache.jackson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Issue 15, "JSON codec silently stops caching": a type Jackson can write but not read back must
 * fail clearly, at build time when Jackson cannot construct it at all, otherwise on the first
 * write, instead of being cached and then rejected by every read.
 */
class JacksonCodecReadBackTest {

  /** Written through its getters; no creator, no no-argument constructor. */
  static final class NoCreator {
    private final String name;

    NoCreator(String name, int ignored) {
      this.name = name;
    }

    public String getName() {
      return name;
    }
  }

  /** Readable, but writes a derived property that the default mapper refuses on read. */
  public static final class DerivedGetter {
    private String first;
    private String last;

    public DerivedGetter() {}

    DerivedGetter(String first, String last) {
      this.first = first;
      this.last = last;
    }

    public String getFirst() {
      return first;
    }

    public void setFirst(String first) {
      this.first = first;
    }

    public String getLast() {
      return last;
    }

    public void setLast(String last) {
      this.last = last;
    }

    public String getFullName() {
      return first + " " + last;
    }
  }

  @Test
  void aTypeJacksonCannotConstruct_failsAtBuildTime_sayingWhy() {
    assertThatThrownBy(() -> JacksonCodec.of(NoCreator.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NoCreator").hasMessageContaining("creator");
  }

  @Test
  void aTypeWrittenWithADerivedProperty_failsOnTheFirstWrite_sayingWhy() {
    JacksonCodec<DerivedGetter> codec = JacksonCodec.of(DerivedGetter.class);
    assertThatThrownBy(() -> codec.encode(new DerivedGetter("Ada", "Lovelace")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not read back").hasMessageContaining("fullName");
  }

  @Test
  void aTypeThatReadsBack_isCheckedOnceAndRoundTrips() {
    JacksonCodec<Fixtures.Item> codec = JacksonCodec.of(Fixtures.Item.class);
    Fixtures.Item item = Fixtures.item("widget");
    for (int i = 0; i < 3; i++) {
      byte[] bytes = codec.encode(item);
      assertThat(codec.decode(bytes, 0, bytes.length)).isEqualTo(item);
    }
  }
}
