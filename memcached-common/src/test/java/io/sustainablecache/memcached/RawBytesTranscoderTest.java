package io.sustainablecache.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import net.spy.memcached.CachedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Unit tests of {@link RawBytesTranscoder}. */
class RawBytesTranscoderTest {

  private final RawBytesTranscoder transcoder = RawBytesTranscoder.INSTANCE;

  /** The client may read the encoded array after the store's future completed: it is a copy. */
  @Test
  void encodesACopyOfTheBytesWithTheByteArrayFlags() {
    byte[] bytes = {1, 2, 3};

    CachedData encoded = transcoder.encode(bytes);
    bytes[0] = 9;

    assertThat(encoded.getFlags()).isEqualTo(8 << 8);
    assertThat(encoded.getData()).isNotSameAs(bytes).containsExactly(1, 2, 3);
  }

  /** 1 is the serialized flag and 2 the compressed flag of the client's default transcoder. */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 8 << 8, 0xffff, -1})
  void decodesToTheStoredBytesWhateverTheFlags(int flags) {
    byte[] bytes = {(byte) 0xac, (byte) 0xed, 0, 5};

    assertThat(transcoder.decode(new CachedData(flags, bytes, CachedData.MAX_SIZE)))
        .isSameAs(bytes);
  }

  @Test
  void neverRefusesAValueOnSizeAndDecodesInline() {
    byte[] twoMebibytes = new byte[2 * 1024 * 1024];

    assertThat(transcoder.getMaxSize()).isEqualTo(Integer.MAX_VALUE);
    assertThat(transcoder.encode(twoMebibytes).getData()).hasSize(2 * 1024 * 1024);
    assertThat(transcoder.asyncDecode(transcoder.encode(twoMebibytes))).isFalse();
  }

  @Test
  void rejectsNull() {
    assertThatNullPointerException().isThrownBy(() -> transcoder.encode(null))
        .withMessage("value");
  }
}
