package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.sustainablecache.arcus.ScriptedPool.Answer;
import io.sustainablecache.arcus.ScriptedPool.Hit;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Stream;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.CASResponse;
import net.spy.memcached.ops.OperationErrorType;
import net.spy.memcached.ops.OperationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unit tests of {@link ArcusStore}: builder validation, and the mapping of every client answer
 * and failure onto the SPI, against a {@link ScriptedPool} (no network).
 */
class ArcusStoreTest {

  private static final byte[] VALUE = "v1".getBytes(US_ASCII);

  private final ScriptedPool pool = new ScriptedPool();

  @AfterEach
  void clearInterruptFlag() {
    Thread.interrupted();
  }

  @Nested
  class Builder {

    @Test
    void defaultsAreTheClientsTimeoutAndMemcachedsKeyLength() {
      ArcusStore store = ArcusStore.of(pool);
      store.gets("k");

      assertThat(pool.lastFuture().waitedMillis).isEqualTo(700);
      assertThat(store.maxKeyLength()).isEqualTo(250);
      assertThat(store).hasToString(
          "ArcusStore[client=ScriptedPool, operationTimeout=700ms, maxKeyLength=250]");
    }

    @Test
    void operationTimeoutIsWhatTheStoreWaits() {
      ArcusStore store = ArcusStore.builder(pool).operationTimeout(Duration.ofSeconds(2)).build();
      store.gets("k");

      assertThat(pool.lastFuture().waitedMillis).isEqualTo(2000);
    }

    @Test
    void operationTimeoutAcceptsOneMillisecond() {
      ArcusStore store = ArcusStore.builder(pool).operationTimeout(Duration.ofMillis(1)).build();
      store.gets("k");

      assertThat(pool.lastFuture().waitedMillis).isEqualTo(1);
    }

    @Test
    void operationTimeoutBeyondLongMillisecondsIsCapped() {
      ArcusStore store =
          ArcusStore.builder(pool).operationTimeout(Duration.ofSeconds(Long.MAX_VALUE)).build();
      store.gets("k");

      assertThat(pool.lastFuture().waitedMillis).isEqualTo(Long.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0S", "PT-0.001S", "PT-5S", "PT0.000999999S"})
    void operationTimeoutBelowOneMillisecondIsRejectedNamingTheValue(String text) {
      Duration timeout = Duration.parse(text);
      ArcusStore.Builder builder = ArcusStore.builder(pool);

      assertThatThrownBy(() -> builder.operationTimeout(timeout))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("operationTimeout must be at least 1 ms, was " + timeout);
    }

    @Test
    void operationTimeoutRejectsNull() {
      assertThatNullPointerException()
          .isThrownBy(() -> ArcusStore.builder(pool).operationTimeout(null))
          .withMessage("timeout");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 250, 4000})
    void maxKeyLengthAcceptsOneToArcusLimit(int length) {
      assertThat(ArcusStore.builder(pool).maxKeyLength(length).build().maxKeyLength())
          .isEqualTo(length);
    }

    @ParameterizedTest
    @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 4001, Integer.MAX_VALUE})
    void maxKeyLengthOutsideOneToArcusLimitIsRejectedNamingTheValue(int length) {
      ArcusStore.Builder builder = ArcusStore.builder(pool);

      assertThatThrownBy(() -> builder.maxKeyLength(length))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxKeyLength must be between 1 and 4000 bytes, was " + length);
    }

    @Test
    void rejectedValuesLeaveTheBuilderUnchanged() {
      ArcusStore.Builder builder = ArcusStore.builder(pool).maxKeyLength(300);

      assertThatThrownBy(() -> builder.maxKeyLength(0)).isInstanceOf(
          IllegalArgumentException.class);
      assertThatThrownBy(() -> builder.operationTimeout(Duration.ZERO)).isInstanceOf(
          IllegalArgumentException.class);

      ArcusStore store = builder.build();
      store.gets("k");
      assertThat(store.maxKeyLength()).isEqualTo(300);
      assertThat(pool.lastFuture().waitedMillis).isEqualTo(700);
    }

    @Test
    void eachBuildCreatesAnIndependentStore() {
      ArcusStore.Builder builder = ArcusStore.builder(pool).maxKeyLength(100);
      ArcusStore first = builder.build();
      ArcusStore second = builder.maxKeyLength(200).build();

      assertThat(first.maxKeyLength()).isEqualTo(100);
      assertThat(second.maxKeyLength()).isEqualTo(200);
    }

    @Test
    void factoriesRejectNullClients() {
      assertThatNullPointerException().isThrownBy(() -> ArcusStore.of((ArcusClient) null))
          .withMessage("client");
      assertThatNullPointerException().isThrownBy(() -> ArcusStore.of((ArcusClientPool) null))
          .withMessage("pool");
      assertThatNullPointerException().isThrownBy(() -> ArcusStore.builder((ArcusClient) null))
          .withMessage("client");
      assertThatNullPointerException()
          .isThrownBy(() -> ArcusStore.builder((ArcusClientPool) null))
          .withMessage("pool");
    }
  }

  @Nested
  class Operations {

    private final ArcusStore store = ArcusStore.of(pool);

    @Test
    void getsOfAMissIsEmpty() {
      pool.answer(Answer.of(null, "END"));

      assertThat(store.gets("k")).isEmpty();
      assertThat(pool.calls).containsExactly("gets k");
    }

    @ParameterizedTest
    @ValueSource(ints = {RawBytesTranscoder.FLAGS, 0, 1, 2, 3, 0xffff})
    void getsReturnsTheStoredBytesAndTokenWhateverTheFlags(int flags) {
      byte[] stored = {(byte) 0xac, (byte) 0xed, 0, 5, 't'};
      pool.answer(Answer.of(new Hit(flags, stored, 42L), "END"));

      StoreItem item = store.gets("k").orElseThrow();

      assertThat(item.value()).containsExactly(stored);
      assertThat(item.casToken()).isEqualTo(42L);
    }

    @Test
    void addReturnsTrueWhenStoredAndWritesRawBytesWithTheByteArrayFlags() {
      pool.answer(Answer.of(true, "STORED"));

      assertThat(store.add("k", VALUE, 60)).isTrue();
      assertThat(pool.calls).containsExactly("add k 60");
      assertWrote(VALUE);
    }

    @Test
    void addReturnsFalseWhenNotStored() {
      pool.answer(Answer.of(false, "NOT_STORED"));

      assertThat(store.add("k", VALUE, 60)).isFalse();
    }

    @Test
    void addFailsOnAnyOtherRefusal() {
      pool.answer(Answer.of(false, "SERVER_ERROR out of memory storing object"));

      assertThatThrownBy(() -> store.add("k", VALUE, 60))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS add failed: SERVER_ERROR out of memory storing object");
    }

    @Test
    void setWritesRawBytesWithTheByteArrayFlags() {
      pool.answer(Answer.of(true, "STORED"));

      store.set("k", VALUE, 0);

      assertThat(pool.calls).containsExactly("set k 0");
      assertWrote(VALUE);
    }

    @Test
    void setFailsWithTheServersAnswerWhenNotStored() {
      pool.answer(Answer.of(false, "NOT_STORED"));

      assertThatThrownBy(() -> store.set("k", VALUE, 0))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS set failed: NOT_STORED");
    }

    @ParameterizedTest
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#casAnswers")
    void casMapsTheServersAnswer(CASResponse response, CasOutcome expected) {
      pool.answer(Answer.of(response, response.name()));

      assertThat(store.cas("k", 7L, VALUE, 30)).isEqualTo(expected);
      assertThat(pool.calls).containsExactly("cas k 7 30");
      assertWrote(VALUE);
    }

    @ParameterizedTest
    @EnumSource(value = CASResponse.class, names = {"CANCELED", "UNDEFINED"})
    void casFailsWhenTheOutcomeIsUnknown(CASResponse response) {
      pool.answer(Answer.of(response, "SERVER_ERROR something"));

      assertThatThrownBy(() -> store.cas("k", 7L, VALUE, 30))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS cas failed: " + response + ": SERVER_ERROR something");
    }

    @Test
    void deleteReportsWhetherAnItemWasRemoved() {
      pool.answer(Answer.of(true, "DELETED"));
      assertThat(store.delete("k")).isTrue();

      pool.answer(Answer.of(false, "NOT_FOUND"));
      assertThat(store.delete("k")).isFalse();

      assertThat(pool.calls).containsExactly("delete k", "delete k");
    }

    @Test
    void deleteFailsOnAnyOtherAnswer() {
      pool.answer(Answer.of(false, "TYPE_MISMATCH"));

      assertThatThrownBy(() -> store.delete("k"))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS delete failed: TYPE_MISMATCH");
    }

    @Test
    void nullArgumentsAreRejectedBeforeAnyCall() {
      assertThatNullPointerException().isThrownBy(() -> store.gets(null)).withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.add(null, VALUE, 0))
          .withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.add("k", null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.set("k", null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.cas("k", 1L, null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.delete(null)).withMessage("key");
      assertThat(pool.calls).isEmpty();
    }

    private void assertWrote(byte[] value) {
      assertThat(pool.encoded).singleElement().satisfies(data -> {
        assertThat(data.getFlags()).isEqualTo(0x800);
        assertThat(data.getData()).isSameAs(value);
      });
    }
  }

  @Nested
  class Failures {

    private final ArcusStore store =
        ArcusStore.builder(pool).operationTimeout(Duration.ofMillis(25)).build();

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void aTimeoutCancelsTheOperation(String name, Consumer<ArcusStore> operation) {
      TimeoutException timeout = new TimeoutException("client timeout");
      pool.answer(Answer.failing(timeout));

      assertThatThrownBy(() -> operation.accept(store))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " timed out after 25 ms")
          .hasCause(timeout);
      assertThat(pool.lastFuture().cancelled).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void anInterruptRestoresTheFlagAndCancelsTheOperation(String name,
        Consumer<ArcusStore> operation) {
      InterruptedException interrupt = new InterruptedException();
      pool.answer(Answer.failing(interrupt));

      assertThatThrownBy(() -> operation.accept(store))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " interrupted")
          .hasCause(interrupt);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      assertThat(pool.lastFuture().cancelled).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void aFailedOperationCarriesTheClientsCause(String name, Consumer<ArcusStore> operation) {
      OperationException serverError = new OperationException(OperationErrorType.SERVER,
          "SERVER_ERROR object too large for cache");
      pool.answer(Answer.failing(new ExecutionException(serverError)));

      assertThatThrownBy(() -> operation.accept(store))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " failed: SERVER_ERROR object too large for cache")
          .hasCause(serverError);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void aCancellationWhileWaitingIsAFailure(String name, Consumer<ArcusStore> operation) {
      CancellationException cancelled = new CancellationException("cancelled");
      pool.answer(Answer.failing(cancelled));

      assertThatThrownBy(() -> operation.accept(store))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " failed: cancelled")
          .hasCause(cancelled);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void aClientThatRefusesTheCallIsAFailure(String name, Consumer<ArcusStore> operation) {
      IllegalStateException shuttingDown = new IllegalStateException("Shutting down");
      pool.answer(Answer.refusing(shuttingDown));

      assertThatThrownBy(() -> operation.accept(store))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " failed: Shutting down")
          .hasCause(shuttingDown);
    }

    @Test
    void aPoolWithoutClientsIsAFailureNotACrash() {
      ArcusStore empty = ArcusStore.of(new ArcusClientPool(1, new ArcusClient[0]));

      assertThatThrownBy(() -> empty.gets("k"))
          .isInstanceOf(StoreException.class)
          .hasMessageStartingWith("ARCUS gets failed: ")
          .hasCauseInstanceOf(ArrayIndexOutOfBoundsException.class);
    }
  }

  static Stream<Arguments> casAnswers() {
    return Stream.of(
        arguments(CASResponse.OK, CasOutcome.STORED),
        arguments(CASResponse.EXISTS, CasOutcome.EXISTS),
        arguments(CASResponse.NOT_FOUND, CasOutcome.NOT_FOUND));
  }

  static List<Arguments> operations() {
    return List.of(
        arguments("gets", (Consumer<ArcusStore>) store -> store.gets("k")),
        arguments("add", (Consumer<ArcusStore>) store -> store.add("k", VALUE, 1)),
        arguments("set", (Consumer<ArcusStore>) store -> store.set("k", VALUE, 1)),
        arguments("cas", (Consumer<ArcusStore>) store -> store.cas("k", 1L, VALUE, 1)),
        arguments("delete", (Consumer<ArcusStore>) store -> store.delete("k")));
  }
}
