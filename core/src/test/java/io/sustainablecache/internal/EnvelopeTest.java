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

    assertThat(bytes).hasSize(Envelope.HEADER_SIZE + payload.length);
    assertThat(Envelope.isValid(bytes)).isTrue();
    assertThat(Envelope.fetchedAt(bytes)).isEqualTo(FETCHED);
    assertThat(Envelope.expiresAt(bytes)).isEqualTo(FETCHED + 30_000);
    assertThat(Envelope.loadMillis(bytes)).isEqualTo(1234);
    assertThat(Envelope.payloadLength(bytes)).isEqualTo(5);
    assertThat(Arrays.copyOfRange(bytes, Envelope.HEADER_SIZE, bytes.length)).isEqualTo(payload);
  }

  @Test
  void anEnvelopeOfAGeneration_carriesIt_inATwentyFourByteHeader_everyKind() {
    byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
    long generation = (1L << 45) + 7;
    byte[] value = Envelope.encode(FETCHED, FETCHED + 30_000, 12, generation, payload);
    byte[] absent = Envelope.encodeAbsent(FETCHED, FETCHED + 1, 3, generation);
    byte[] tombstone = Envelope.encodeTombstone(FETCHED, generation);

    assertThat(value).hasSize(Envelope.GENERATION_HEADER_SIZE + payload.length);
    assertThat(Envelope.isValid(value)).isTrue();
    assertThat(Envelope.kind(value)).isEqualTo(Envelope.KIND_VALUE);
    assertThat(Envelope.generation(value)).isEqualTo(generation);
    assertThat(Envelope.fetchedAt(value)).isEqualTo(FETCHED);
    assertThat(Envelope.loadMillis(value)).isEqualTo(12);
    assertThat(Envelope.payloadOffset(value)).isEqualTo(24);
    assertThat(Arrays.copyOfRange(value, Envelope.payloadOffset(value), value.length))
        .isEqualTo(payload);
    assertThat(Envelope.payloadLength(value)).isEqualTo(5);
    assertThat(Envelope.isValid(absent)).isTrue();
    assertThat(Envelope.kind(absent)).isEqualTo(Envelope.KIND_ABSENT);
    assertThat(Envelope.generation(absent)).isEqualTo(generation);
    assertThat(Envelope.kind(tombstone)).isEqualTo(Envelope.KIND_TOMBSTONE);
    assertThat(Envelope.generation(tombstone)).isEqualTo(generation);

    byte[] none = Envelope.encode(FETCHED, FETCHED, 0, 0, payload);
    assertThat(none).as("generation 0: version 1, byte for byte")
        .isEqualTo(Envelope.encode(FETCHED, FETCHED, 0, payload));
    assertThat(Envelope.generation(none)).isZero();
    assertThat(Envelope.payloadOffset(none)).isEqualTo(Envelope.HEADER_SIZE);
    assertThatThrownBy(() -> Envelope.encode(FETCHED, FETCHED, 0, -1, payload))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("generation");
  }

  @Test
  void aVersionTwoHeaderThatIsShort_orHasNoGeneration_orAnAbsenceWithAPayload_isInvalid() {
    byte[] value = Envelope.encode(FETCHED, FETCHED, 0, 99, new byte[0]);
    assertThat(Envelope.isValid(Arrays.copyOf(value, 20))).as("truncated header").isFalse();
    byte[] zero = value.clone();
    Arrays.fill(zero, 16, 24, (byte) 0);
    assertThat(Envelope.isValid(zero)).as("a generation of 0").isFalse();
    byte[] negative = value.clone();
    negative[16] = (byte) 0x80;
    assertThat(Envelope.isValid(negative)).as("a negative generation").isFalse();
    byte[] absent = Envelope.encodeAbsent(FETCHED, FETCHED, 0, 99);
    assertThat(Envelope.isValid(Arrays.copyOf(absent, 25))).isFalse();
    byte[] version3 = value.clone();
    version3[1] = 0x03;
    assertThat(Envelope.isValid(version3)).isFalse();
  }

  @Test
  void headerIsSixteenBytes() {
    assertThat(Envelope.HEADER_SIZE).isEqualTo(16);
    assertThat(Envelope.encode(0, 0, 0, new byte[0])).hasSize(16);
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
    futureVersion[1] = 2;
    assertThat(Envelope.isValid(magic)).isFalse();
    assertThat(Envelope.isValid(futureVersion)).isFalse();
  }

  @Test
  void expiryBeforeFetchTimeIsInvalid() {
    byte[] bytes = Envelope.encode(FETCHED, FETCHED + 10, 1, new byte[0]);
    bytes[13] = 0; // lower the expiry's last byte below the fetch time's
    bytes[7] = (byte) 0xFF;
    assertThat(Envelope.isValid(bytes)).isFalse();
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
