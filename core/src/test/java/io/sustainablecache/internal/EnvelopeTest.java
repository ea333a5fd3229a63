package io.sustainablecache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

final class EnvelopeTest {

  private static final long FETCHED = 1_790_000_000_123L;

  @Test
  void roundTripsEveryField() {
    byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
    byte[] bytes = Envelope.encode(FETCHED, FETCHED + 30_000, 1234, payload);

    assertThat(bytes).hasSize(Envelope.HEADER_SIZE + payload.length + Envelope.CHECKSUM_SIZE);
    assertThat(Envelope.isValid(bytes)).isTrue();
    assertThat(Envelope.fetchedAt(bytes)).isEqualTo(FETCHED);
    assertThat(Envelope.expiresAt(bytes)).isEqualTo(FETCHED + 30_000);
    assertThat(Envelope.loadMillis(bytes)).isEqualTo(1234);
    assertThat(Envelope.payloadLength(bytes)).isEqualTo(5);
    assertThat(Arrays.copyOfRange(bytes, Envelope.HEADER_SIZE, Envelope.HEADER_SIZE + 5))
        .isEqualTo(payload);
  }

  @Test
  void anEnvelopeOfAGeneration_carriesIt_inATwentyFourByteHeader_everyKind() {
    byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
    long generation = (1L << 45) + 7;
    byte[] value = Envelope.encode(FETCHED, FETCHED + 30_000, 12, generation, payload);
    byte[] absent = Envelope.encodeAbsent(FETCHED, FETCHED + 1, 3, generation);
    byte[] tombstone = Envelope.encodeTombstone(FETCHED, generation);

    assertThat(value).hasSize(
        Envelope.GENERATION_HEADER_SIZE + payload.length + Envelope.CHECKSUM_SIZE);
    assertThat(Envelope.isValid(value)).isTrue();
    assertThat(Envelope.kind(value)).isEqualTo(Envelope.KIND_VALUE);
    assertThat(Envelope.generation(value)).isEqualTo(generation);
    assertThat(Envelope.fetchedAt(value)).isEqualTo(FETCHED);
    assertThat(Envelope.loadMillis(value)).isEqualTo(12);
    assertThat(Envelope.payloadOffset(value)).isEqualTo(24);
    assertThat(Arrays.copyOfRange(value, Envelope.payloadOffset(value),
        Envelope.payloadOffset(value) + Envelope.payloadLength(value))).isEqualTo(payload);
    assertThat(Envelope.payloadLength(value)).isEqualTo(5);
    assertThat(Envelope.isValid(absent)).isTrue();
    assertThat(Envelope.kind(absent)).isEqualTo(Envelope.KIND_ABSENT);
    assertThat(Envelope.generation(absent)).isEqualTo(generation);
    assertThat(Envelope.kind(tombstone)).isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(Envelope.generation(tombstone)).isEqualTo(generation);

    byte[] none = Envelope.encode(FETCHED, FETCHED, 0, 0, payload);
    assertThat(none).as("generation 0: version 3, byte for byte")
        .isEqualTo(Envelope.encode(FETCHED, FETCHED, 0, payload));
    assertThat(Envelope.generation(none)).isZero();
    assertThat(Envelope.payloadOffset(none)).isEqualTo(Envelope.HEADER_SIZE);
    assertThatThrownBy(() -> Envelope.encode(FETCHED, FETCHED, 0, -1, payload))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("generation");
  }

  @Test
  void aGenerationHeaderThatIsShort_orHasNoGeneration_orAnAbsenceWithAPayload_isInvalid() {
    byte[] value = Envelope.encode(FETCHED, FETCHED, 0, 99, new byte[0]);
    assertThat(Envelope.isValid(value)).isTrue();
    assertThat(Envelope.isValid(Envelope.resealed(Arrays.copyOf(value, 20))))
        .as("truncated header").isFalse();
    byte[] zero = value.clone();
    Arrays.fill(zero, 16, 24, (byte) 0);
    assertThat(Envelope.isValid(Envelope.resealed(zero))).as("a generation of 0").isFalse();
    byte[] negative = value.clone();
    negative[16] = (byte) 0x80;
    assertThat(Envelope.isValid(Envelope.resealed(negative))).as("a negative generation")
        .isFalse();
    byte[] absent = Envelope.encodeAbsent(FETCHED, FETCHED, 0, 99);
    assertThat(Envelope.isValid(Envelope.resealed(Arrays.copyOf(absent, absent.length + 1))))
        .as("an absence with a payload").isFalse();
    byte[] unknown = value.clone();
    unknown[1] = 0x05;
    assertThat(Envelope.isValid(Envelope.resealed(unknown))).as("version 5").isFalse();
  }

  @Test
  void headerIsSixteenBytes_andTheChecksumFour() {
    assertThat(Envelope.HEADER_SIZE).isEqualTo(16);
    assertThat(Envelope.encode(0, 0, 0, new byte[0])).hasSize(20);
  }

  /** Issue 31: a changed byte is a miss, never a value, wherever it is. */
  @Test
  void everyFlippedBit_andEverySplice_isInvalid() {
    byte[] value = Envelope.encode(FETCHED, FETCHED + 30_000, 7, 42,
        "{\"ver\":0}".getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < value.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = value.clone();
        flipped[i] ^= (byte) (1 << bit);
        assertThat(Envelope.isValid(flipped)).as("byte %d, bit %d", i, bit).isFalse();
      }
    }
    byte[] other = Envelope.encode(FETCHED, FETCHED + 30_000, 7, 42,
        "{\"ver\":9}".getBytes(StandardCharsets.UTF_8));
    byte[] spliced = value.clone();
    System.arraycopy(other, 24, spliced, 24, other.length - 24 - Envelope.CHECKSUM_SIZE);
    assertThat(Envelope.isValid(spliced)).as("another payload under this checksum").isFalse();
    assertThat(Envelope.isValid(Arrays.copyOf(value, value.length - 1))).isFalse();
  }

  /** The formats before 0.1.0 (versions 1 and 2, no checksum) read as foreign. */
  @Test
  void theFormatsWithoutAChecksum_areForeign() {
    byte[] value = Envelope.encode(FETCHED, FETCHED + 1, 1, new byte[3]);
    byte[] version1 = Arrays.copyOf(value, value.length - Envelope.CHECKSUM_SIZE);
    version1[1] = 0x01;
    assertThat(Envelope.isValid(version1)).isFalse();
    assertThat(Envelope.isValid(Envelope.resealed(version1))).isFalse();
  }

  @Test
  void roundTripsTheExtremesOfEachField() {
    byte[] bytes = Envelope.encode(Envelope.MAX_TIMESTAMP, Envelope.MAX_TIMESTAMP,
        Envelope.MAX_LOAD_MILLIS, new byte[] {-1});
    assertThat(Envelope.fetchedAt(bytes)).isEqualTo(Envelope.MAX_TIMESTAMP);
    assertThat(Envelope.expiresAt(bytes)).isEqualTo(Envelope.MAX_TIMESTAMP);
    assertThat(Envelope.loadMillis(bytes)).isEqualTo(65535);
  }

  @Test
  void loadTimeSaturatesInsteadOfWrapping() {
    assertThat(Envelope.loadMillis(Envelope.encode(FETCHED, FETCHED, 70_000, new byte[0])))
        .isEqualTo(Envelope.MAX_LOAD_MILLIS);
    assertThat(Envelope.loadMillis(Envelope.encode(FETCHED, FETCHED, -5, new byte[0]))).isZero();
  }

  @Test
  void rejectsTimestampsItCannotRepresent() {
    assertThatThrownBy(() -> Envelope.encode(-1, 0, 0, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fetchedAt");
    assertThatThrownBy(() -> Envelope.encode(FETCHED, FETCHED - 1, 0, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expiresAt");
    assertThatThrownBy(() -> Envelope.encode(0, Envelope.MAX_TIMESTAMP + 1, 0, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void truncatedEnvelopeIsInvalid() {
    byte[] bytes = Envelope.encode(FETCHED, FETCHED + 1, 1, new byte[0]);
    for (int length = 0; length < Envelope.HEADER_SIZE; length++) {
      assertThat(Envelope.isValid(Arrays.copyOf(bytes, length))).as("length %d", length).isFalse();
    }
    assertThat(Envelope.isValid(null)).isFalse();
  }

  @Test
  void otherMagicOrVersionIsInvalid() {
    byte[] bytes = Envelope.encode(FETCHED, FETCHED + 1, 1, new byte[3]);
    byte[] magic = bytes.clone();
    magic[0] = 0x00;
    byte[] futureVersion = bytes.clone();
    futureVersion[1] = 5;
    assertThat(Envelope.isValid(Envelope.resealed(magic))).isFalse();
    assertThat(Envelope.isValid(Envelope.resealed(futureVersion))).isFalse();
  }

  @Test
  void expiryBeforeFetchTimeIsInvalid() {
    byte[] bytes = Envelope.encode(FETCHED, FETCHED + 10, 1, new byte[0]);
    bytes[13] = 0; // lower the expiry's last byte below the fetch time's
    bytes[7] = (byte) 0xFF;
    assertThat(Envelope.isValid(Envelope.resealed(bytes))).isFalse();
  }

  @Test
  void foreignValuesAreInvalid() throws IOException {
    ByteArrayOutputStream serialized = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(serialized)) {
      out.writeObject("a serialized string that is long enough");
    }
    assertThat(Envelope.isValid(serialized.toByteArray())).isFalse();
    assertThat(Envelope.isValid(
        "{\"json\":\"from another client, long enough\"}".getBytes(StandardCharsets.UTF_8)))
        .isFalse();
    assertThat(Envelope.isValid("Ŝ plain UTF-8 text starting with U+015C".getBytes(
        StandardCharsets.UTF_8))).isFalse();
  }
}
