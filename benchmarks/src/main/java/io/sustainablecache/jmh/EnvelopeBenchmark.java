package io.sustainablecache.jmh;

import io.sustainablecache.ValueCodec;
import io.sustainablecache.internal.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The cost of the envelope, the 16-byte header ({@link Envelope#HEADER_SIZE}) the cache stores in
 * front of every value and the 4-byte CRC32C checksum ({@link Envelope#CHECKSUM_SIZE}) after it,
 * for payloads of 16 B, 1 KiB and 64 KiB ({@code size}):
 * <ul>
 *   <li>{@link #encode}: {@link Envelope#encode} of an already encoded payload (allocates and
 *       copies {@code 16 + size} bytes);</li>
 *   <li>{@link #encodeWithCodec}: what the cache's write does, {@code ValueCodec.utf8().encode}
 *       of a string and then {@link Envelope#encode};</li>
 *   <li>{@link #readHeader}: {@link Envelope#isValid} (the checksum included) and the three
 *       header fields, what a read needs before the refresh decision (no allocation);</li>
 *   <li>{@link #decode}: {@link #readHeader} plus decoding the payload with {@link
 *       ValueCodec#utf8()}, what a hit costs on top of the network read.</li>
 * </ul>
 * The payload is ASCII text, so {@code new String(bytes, UTF_8)} takes its fast path. The
 * envelope's space overhead is a constant 20 bytes per item whatever
 * the payload; each fork prints it with the relative overhead for its payload size (a benchmark
 * cannot assert it).
 *
 * <p>Run (allocation as {@code gc.alloc.rate.norm}, B/op):
 * <pre>{@code
 * mvn -B -DskipTests package
 * java -jar benchmarks/target/benchmarks.jar EnvelopeBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class EnvelopeBenchmark {

  @Param({"16", "1024", "65536"})
  public int size;

  long fetchedAt;
  long expiresAt;
  long loadMillis;
  String text;
  byte[] payload;
  byte[] envelope;
  ValueCodec<String> codec;

  @Setup(Level.Trial)
  public void setUp() {
    fetchedAt = DecisionBenchmark.FETCHED_AT;
    expiresAt = fetchedAt + DecisionBenchmark.TTL_MILLIS;
    loadMillis = DecisionBenchmark.LOAD_MILLIS;
    codec = ValueCodec.utf8();
    StringBuilder sb = new StringBuilder(size);
    for (int i = 0; i < size; i++) {
      sb.append((char) ('a' + i % 26));
    }
    text = sb.toString();
    payload = text.getBytes(StandardCharsets.UTF_8);
    envelope = Envelope.encode(fetchedAt, expiresAt, loadMillis, payload);
    int overhead = Envelope.HEADER_SIZE + Envelope.CHECKSUM_SIZE;
    if (envelope.length != payload.length + overhead
        || !codec.decode(envelope, Envelope.HEADER_SIZE, Envelope.payloadLength(envelope))
            .equals(text)) {
      throw new IllegalStateException("envelope round trip failed");
    }
    System.out.printf("%nenvelope overhead: payload %d B -> stored %d B, +%d B (%.2f %%)%n",
        payload.length, envelope.length, overhead, 100.0 * overhead / payload.length);
  }

  /**
   * Wraps an encoded payload in an envelope.
   *
   * @return the new envelope, consumed by JMH
   */
  @Benchmark
  public byte[] encode() {
    return Envelope.encode(fetchedAt, expiresAt, loadMillis, payload);
  }

  /**
   * Encodes a string with the UTF-8 codec and wraps it, as a cache write does.
   *
   * @return the new envelope, consumed by JMH
   */
  @Benchmark
  public byte[] encodeWithCodec() {
    return Envelope.encode(fetchedAt, expiresAt, loadMillis, codec.encode(text));
  }

  /**
   * Validates an envelope and reads its header fields, without the payload.
   *
   * @param bh consumes the fields
   */
  @Benchmark
  public void readHeader(Blackhole bh) {
    byte[] bytes = envelope;
    if (!Envelope.isValid(bytes)) {
      throw new IllegalStateException("invalid envelope");
    }
    bh.consume(Envelope.fetchedAt(bytes));
    bh.consume(Envelope.expiresAt(bytes));
    bh.consume(Envelope.loadMillis(bytes));
  }

  /**
   * Validates an envelope, reads its header fields and decodes the payload with the UTF-8 codec.
   *
   * @param bh consumes the fields and the decoded string
   */
  @Benchmark
  public void decode(Blackhole bh) {
    byte[] bytes = envelope;
    if (!Envelope.isValid(bytes)) {
      throw new IllegalStateException("invalid envelope");
    }
    bh.consume(Envelope.fetchedAt(bytes));
    bh.consume(Envelope.expiresAt(bytes));
    bh.consume(Envelope.loadMillis(bytes));
    bh.consume(codec.decode(bytes, Envelope.HEADER_SIZE, Envelope.payloadLength(bytes)));
  }
}
