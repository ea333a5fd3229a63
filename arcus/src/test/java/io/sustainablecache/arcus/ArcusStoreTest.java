package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.arcus.ScriptedPool.Answer;
import io.sustainablecache.memcached.RawBytesTranscoder;
import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.PartialReadException;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.ops.OperationException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unit tests of {@link ArcusStore}: builder validation, and the mapping of every answer and
 * failure of the client onto the SPI, against a {@link ScriptedPool} that feeds the store's real
 * client operations the bytes a server would send (no network).
 */
class ArcusStoreTest {

  private static final byte[] VALUE = "v1".getBytes(US_ASCII);
  private static final Duration PATIENCE = Duration.ofSeconds(5);

  private final ScriptedPool pool = new ScriptedPool();

  private ArcusStore.Builder builder() {
    return ArcusStore.builder(pool, (byte) ':', "ScriptedPool");
  }

  @Nested
  class Builder {

    @Test
    void defaultsAreTheClientsTimeoutAndMemcachedsKeyLength() {
      ArcusStore store = builder().build();

      assertThat(store.operationTimeout()).isEqualTo(Duration.ofMillis(700));
      assertThat(store.maxKeyLength()).isEqualTo(250);
      assertThat(store).hasToString(
          "ArcusStore[client=ScriptedPool, operationTimeout=700 ms, maxKeyLength=250]");
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0.001S", "PT0.0015S", "PT2S", "PT10M"})
    void operationTimeoutAcceptsOneMillisecondToTenMinutes(String text) {
      Duration timeout = Duration.parse(text);
      assertThat(builder().operationTimeout(timeout).build().operationTimeout())
          .isEqualTo(timeout);
    }

    @ParameterizedTest
    @ValueSource(strings = {"PT0S", "PT-0.001S", "PT-5S", "PT0.000999999S", "PT10M0.000000001S",
        "PT2562047788015215H"})
    void operationTimeoutOutOfRangeIsRejectedNamingTheValue(String text) {
      Duration timeout = Duration.parse(text);
      ArcusStore.Builder builder = builder();

      assertThatThrownBy(() -> builder.operationTimeout(timeout))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("operationTimeout must be between 1 ms and 10 min, was " + timeout);
    }

    @Test
    void operationTimeoutRejectsNull() {
      assertThatNullPointerException()
          .isThrownBy(() -> builder().operationTimeout(null))
          .withMessage("operationTimeout");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 250, 4000})
    void maxKeyLengthAcceptsOneToArcusLimit(int length) {
      assertThat(builder().maxKeyLength(length).build().maxKeyLength()).isEqualTo(length);
    }

    @ParameterizedTest
    @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 4001, Integer.MAX_VALUE})
    void maxKeyLengthOutsideOneToArcusLimitIsRejectedNamingTheValue(int length) {
      ArcusStore.Builder builder = builder();

      assertThatThrownBy(() -> builder.maxKeyLength(length))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxKeyLength must be between 1 and 4000 bytes, was " + length);
    }

    @Test
    void rejectedValuesLeaveTheBuilderUnchanged() {
      ArcusStore.Builder builder = builder().maxKeyLength(300);

      assertThatThrownBy(() -> builder.maxKeyLength(0))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> builder.operationTimeout(Duration.ZERO))
          .isInstanceOf(IllegalArgumentException.class);

      ArcusStore store = builder.build();
      assertThat(store.maxKeyLength()).isEqualTo(300);
      assertThat(store.operationTimeout()).isEqualTo(Duration.ofMillis(700));
    }

    @Test
    void eachBuildCreatesAnIndependentStore() {
      ArcusStore.Builder builder = builder().maxKeyLength(100);
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

    @Test
    void aPoolWithoutClientsFailsTheFutureInsteadOfThrowing() {
      ArcusStore empty = ArcusStore.of(new ArcusClientPool(1, new ArcusClient[0]));

      assertThat(failure(empty.gets("k")))
          .isInstanceOf(StoreException.class)
          .hasMessageStartingWith("ARCUS gets failed: ")
          .hasCauseInstanceOf(ArrayIndexOutOfBoundsException.class);
    }
  }

  @Nested
  class Operations {

    private final ArcusStore store = builder().build();

    @Test
    void getsOfAMissIsEmpty() {
      pool.answer(Answer.reply("END\r\n"));

      assertThat(value(store.gets("k"))).isEmpty();
      assertThat(pool.requests).containsExactly("gets k\r\n");
    }

    @ParameterizedTest
    @ValueSource(ints = {RawBytesTranscoder.FLAGS, 0, 1, 2, 3, 0xffff})
    void getsReturnsTheStoredBytesAndTokenWhateverTheFlags(int flags) {
      byte[] stored = {(byte) 0xac, (byte) 0xed, 0, 5, 't'};
      pool.answer(Answer.reply(("VALUE k " + flags + " 5 42\r\n" + new String(stored, ISO_8859_1)
          + "\r\nEND\r\n").getBytes(ISO_8859_1)));

      StoreItem item = value(store.gets("k")).orElseThrow();

      assertThat(item.value()).containsExactly(stored);
      assertThat(item.casToken()).isEqualTo(42L);
    }

    @Test
    void addReturnsTrueWhenStoredAndWritesRawBytesWithTheByteArrayFlags() {
      pool.answer(Answer.reply("STORED\r\n"));

      assertThat(value(store.add("k", VALUE, 60))).isTrue();
      assertThat(pool.requests).containsExactly("add k 2048 60 2\r\nv1\r\n");
    }

    /**
     * Issue 24, defect 7: ARCUS reads exptime {@code -1} as "sticky" (never expires; refused
     * with {@code SERVER_ERROR out of memory storing object} without a sticky limit), so a
     * negative exptime goes out as 2592001, an absolute time in 1970 that every server expires
     * at once.
     */
    @Test
    void aNegativeExptimeIsSentAsAnAbsoluteTimeIn1970_neverAsStickyMinusOne() {
      pool.answerWith(request -> Answer.reply(request.startsWith("incr") ? "NOT_FOUND\r\n"
          : "STORED\r\n"));

      value(store.add("a", VALUE, -1));
      value(store.set("s", VALUE, -1));
      value(store.cas("c", 7L, VALUE, -1));
      value(store.incr("i", 1, 5, -1));

      assertThat(pool.requests).containsExactly("add a 2048 2592001 2\r\nv1\r\n",
          "set s 2048 2592001 2\r\nv1\r\n", "cas c 2048 2592001 2 7\r\nv1\r\n",
          "incr i 1\r\n", "add i 2048 2592001 1\r\n5\r\n");
    }

    @Test
    void incrOfAnExistingCounterIsOneRequest() {
      pool.answer(Answer.reply("8\r\n"));

      assertThat(value(store.incr("k", 3, 100, 60))).isEqualTo(8L);
      assertThat(pool.requests).containsExactly("incr k 3\r\n");
    }

    @Test
    void incrOfAMissingCounterAddsTheInitialValue() {
      Iterator<String> replies = List.of("NOT_FOUND\r\n", "STORED\r\n").iterator();
      pool.answerWith(request -> Answer.reply(replies.next()));

      assertThat(value(store.incr("k", 3, 100, 60))).isEqualTo(100L);
      assertThat(pool.requests)
          .containsExactly("incr k 3\r\n", "add k 2048 60 3\r\n100\r\n");
    }

    @Test
    void incrWhoseAddLosesToAnotherClient_incrementsAgain_andFailsIfTheCounterVanished() {
      Iterator<String> replies =
          List.of("NOT_FOUND\r\n", "NOT_STORED\r\n", "101\r\n").iterator();
      pool.answerWith(request -> Answer.reply(replies.next()));

      assertThat(value(store.incr("k", 1, 100, 60))).isEqualTo(101L);
      assertThat(pool.requests).containsExactly("incr k 1\r\n", "add k 2048 60 3\r\n100\r\n",
          "incr k 1\r\n");

      Iterator<String> vanished =
          List.of("NOT_FOUND\r\n", "NOT_STORED\r\n", "NOT_FOUND\r\n").iterator();
      pool.answerWith(request -> Answer.reply(vanished.next()));
      assertThat(failure(store.incr("k", 1, 100, 60))).isInstanceOf(StoreException.class)
          .hasMessageContaining("vanished");
    }

    @Test
    void addReturnsFalseWhenNotStored() {
      pool.answer(Answer.reply("NOT_STORED\r\n"));

      assertThat(value(store.add("k", VALUE, 60))).isFalse();
    }

    @Test
    void addFailsOnAServerError() {
      pool.answer(Answer.reply("SERVER_ERROR out of memory storing object\r\n"));

      assertThat(failure(store.add("k", VALUE, 60)))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS add failed: SERVER_ERROR out of memory storing object")
          .hasCauseInstanceOf(OperationException.class);
    }

    @Test
    void setWritesRawBytesWithTheByteArrayFlags() {
      pool.answer(Answer.reply("STORED\r\n"));

      assertThat(value(store.set("k", VALUE, 0))).isNull();
      assertThat(pool.requests).containsExactly("set k 2048 0 2\r\nv1\r\n");
    }

    @Test
    void setFailsWithTheServersAnswerWhenNotStored() {
      pool.answer(Answer.reply("NOT_STORED\r\n"));

      assertThat(failure(store.set("k", VALUE, 0)))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS set failed: NOT_STORED");
    }

    @Test
    void anOversizedValueFailsAddSetAndCasAlike() {
      pool.answer(Answer.reply("SERVER_ERROR object too large for cache\r\n"));

      for (CompletableFuture<?> write : List.of(store.add("k", VALUE, 0),
          store.set("k", VALUE, 0), store.cas("k", 1L, VALUE, 0))) {
        assertThat(failure(write)).isInstanceOf(StoreException.class)
            .hasMessageEndingWith(" failed: SERVER_ERROR object too large for cache");
      }
    }

    @ParameterizedTest
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#casAnswers")
    void casMapsTheServersAnswer(String line, CasOutcome expected) {
      pool.answer(Answer.reply(line + "\r\n"));

      assertThat(value(store.cas("k", 7L, VALUE, 30))).isEqualTo(expected);
      assertThat(pool.requests).containsExactly("cas k 2048 30 2 7\r\nv1\r\n");
    }

    @Test
    void casFailsOnAnyOtherAnswer() {
      pool.answer(Answer.reply("SERVER_ERROR something\r\n"));

      assertThat(failure(store.cas("k", 7L, VALUE, 30)))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS cas failed: SERVER_ERROR something");
    }

    @Test
    void deleteReportsWhetherAnItemWasRemovedAndForgetsTheFrontCacheEntry() {
      pool.answer(Answer.reply("DELETED\r\n"));
      assertThat(value(store.delete("k"))).isTrue();

      pool.answer(Answer.reply("NOT_FOUND\r\n"));
      assertThat(value(store.delete("k"))).isFalse();

      assertThat(pool.requests).containsExactly("delete k\r\n", "delete k\r\n");
      assertThat(pool.forgotten).containsExactly("k", "k");
    }

    @Test
    void deleteFailsOnAnyOtherAnswer() {
      pool.answer(Answer.reply("TYPE_MISMATCH\r\n"));

      assertThat(failure(store.delete("k")))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS delete failed: TYPE_MISMATCH");
    }

    @Test
    void anErrorLineSaysTheServerDoesNotKnowTheCommand() {
      pool.answer(Answer.reply("ERROR\r\n"));

      assertThat(failure(store.delete("k")))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS delete failed: the server answered ERROR (it does not know the"
              + " command)");
    }

    /**
     * The operation keeps a copy of the value: changing the caller's array afterwards changes
     * nothing the client could still write (for example when it resends after a switchover).
     */
    @Test
    void writesCopyTheValue() {
      pool.answer(Answer.silence());
      ArcusStore patient = builder().operationTimeout(Duration.ofMinutes(1)).build();
      List<CompletableFuture<?>> writes = new ArrayList<>();
      List<byte[]> values = new ArrayList<>();
      for (Function<byte[], CompletableFuture<?>> write : List.<Function<byte[],
          CompletableFuture<?>>>of(
          value -> patient.add("k", value, 0),
          value -> patient.set("k", value, 0),
          value -> patient.cas("k", 1L, value, 0))) {
        byte[] value = VALUE.clone();
        values.add(value);
        writes.add(write.apply(value));
      }
      List<String> requests = List.copyOf(pool.requests);
      values.forEach(value -> value[0] = 'X');

      for (int i = 0; i < 3; i++) {
        Operation operation = pool.operations.get(i);
        operation.initialize();
        assertThat(request(operation)).isEqualTo(requests.get(i)).contains("\r\nv1\r\n");
      }
      writes.forEach(write -> write.cancel(true));
    }

    @Test
    void keysWithADelByteAreSentAsTheyAre() {
      pool.answer(Answer.reply("STORED\r\n"));

      assertThat(value(store.add("k\u007Flease", VALUE, 30))).isTrue();
      assertThat(pool.lastRequest()).isEqualTo("add k\u007Flease 2048 30 2\r\nv1\r\n");
    }

    @Test
    void nullArgumentsAreRejectedBeforeAnyCall() {
      assertThatNullPointerException().isThrownBy(() -> store.gets(null)).withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.getsAll(null)).withMessage("keys");
      assertThatNullPointerException()
          .isThrownBy(() -> store.getsAll(java.util.Arrays.asList("k", null))).withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.add(null, VALUE, 0))
          .withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.add("k", null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.set("k", null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.cas("k", 1L, null, 0))
          .withMessage("value");
      assertThatNullPointerException().isThrownBy(() -> store.delete(null)).withMessage("key");
      assertThatNullPointerException().isThrownBy(() -> store.flushPrefix(null))
          .withMessage("prefix");
      assertThat(pool.operations).isEmpty();
    }

    @ParameterizedTest
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#invalidKeys")
    void anInvalidKeyFailsTheFutureWithoutAnyRequest(String key, String problem) {
      for (CompletableFuture<?> future : List.of(store.gets(key), store.getsAll(List.of(key)),
          store.add(key, VALUE, 0), store.set(key, VALUE, 0), store.cas(key, 1L, VALUE, 0),
          store.delete(key))) {
        assertThat(future).isCompletedExceptionally();
        assertThat(failure(future)).isInstanceOf(StoreException.class)
            .hasMessageEndingWith(" failed: " + problem);
      }
      assertThat(pool.operations).isEmpty();
    }

    @Test
    void theKeyLimitIsTheStoresNotTheClients() {
      ArcusStore arcusKeys = builder().maxKeyLength(4000).build();
      pool.answer(Answer.reply("END\r\n"));

      assertThat(value(arcusKeys.gets("k".repeat(4000)))).isEmpty();
      assertThat(failure(store.gets("k".repeat(251))))
          .hasMessage("ARCUS gets failed: the key is longer than 250 bytes");
      assertThat(pool.operations).hasSize(1);
    }

    @Test
    void aClientThatWasShutDownFailsTheFutureWithoutAnyRequest() {
      pool.shutDown();

      assertThat(failure(store.gets("k")))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS gets failed: the client is shut down");
      assertThat(pool.operations).isEmpty();
    }

    /**
     * The client's queueing waits interruptibly, so it would refuse every operation of an
     * interrupted thread: the store queues with the flag cleared, then sets it again.
     */
    @Test
    void anInterruptedCallerGetsItsAnswerAndKeepsItsFlag() {
      pool.answer(Answer.reply("STORED\r\n"));
      CompletableFuture<Void> set;
      Thread.currentThread().interrupt();
      try {
        set = store.set("k", VALUE, 0);
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
      } finally {
        Thread.interrupted();
      }
      assertThat(set).isCompleted().isNotCompletedExceptionally();
      assertThat(pool.interruptedWhileQueueing).containsExactly(false);
    }
  }

  @Nested
  class BulkReads {

    private final ArcusStore store = builder().build();

    @Test
    void getsAllOfNoKeysSendsNothing() {
      assertThat(value(store.getsAll(List.of()))).isEmpty();
      assertThat(pool.operations).isEmpty();
    }

    /** 450 keys over two nodes: one request per node and per 200 keys, as asyncGetsBulk. */
    @Test
    void getsAllSendsOneRequestPerNodeAndPerTwoHundredKeys() {
      MemcachedNode even = ScriptedPool.node("even", true, false);
      MemcachedNode odd = ScriptedPool.node("odd", true, true);
      pool.nodes(List.of(even, odd),
          key -> Integer.parseInt(key.substring(2)) % 2 == 0 ? even : odd);
      List<String> keys = IntStream.range(0, 450).mapToObj(i -> "k-" + i).toList();
      List<String> present = keys.stream().filter(k -> k.hashCode() % 3 == 0).toList();
      pool.answerWith(request -> Answer.reply(ScriptedPool.getsAnswer(
          present.stream().filter(request::contains).filter(k -> requested(request, k))
              .toList(), RawBytesTranscoder.FLAGS)));

      Map<String, StoreItem> found = value(store.getsAll(keys));

      assertThat(found).containsOnlyKeys(present);
      present.forEach(k -> assertThat(found.get(k).value()).isEqualTo(("v:" + k)
          .getBytes(US_ASCII)));
      assertThat(pool.requests).hasSize(4);
      assertThat(pool.requests.stream().filter(r -> r.startsWith("gets "))).hasSize(2);
      assertThat(pool.requests.stream().filter(r -> r.startsWith("mgets "))).hasSize(2);
      assertThat(pool.requests.stream().mapToInt(ArcusStoreTest::keyCount).sorted().toArray())
          .containsExactly(25, 25, 200, 200);
    }

    /**
     * Issue 31: the keys of a node that is down fail at once, unsent; the others are read, and
     * the read fails with a {@link PartialReadException} carrying them (a dead node costs a
     * {@code getAll} its own keys only). With every key on the node that is down, a plain
     * failure and no request.
     */
    @Test
    void aKeyOnANodeThatIsDownFailsAloneUnsent_theOthersAreRead() {
      MemcachedNode up = ScriptedPool.node("up", true, false);
      MemcachedNode down = ScriptedPool.node("down", false, false);
      pool.nodes(List.of(up, down), key -> key.startsWith("up") ? up : down);
      pool.answerWith(request -> Answer.reply(ScriptedPool.getsAnswer(
          List.of("up-1"), RawBytesTranscoder.FLAGS)));

      assertThat(failure(store.getsAll(List.of("up-1", "down-1", "up-2"))))
          .isInstanceOfSatisfying(PartialReadException.class, partial -> {
            assertThat(partial.failedKeys()).containsExactly("down-1");
            assertThat(partial.found()).containsOnlyKeys("up-1");
            assertThat(partial.found().get("up-1").value()).isEqualTo("v:up-1"
                .getBytes(US_ASCII));
          })
          .hasMessageStartingWith("ARCUS getsAll failed for 1 of 3 keys: the server of a key is"
              + " down (down/")
          .hasMessageNotContaining("down-1").hasMessageNotContaining("up-1");
      assertThat(pool.requests).singleElement().satisfies(request -> assertThat(request)
          .contains("up-1").contains("up-2").doesNotContain("down-1"));
      assertThat(value(store.getsAll(List.of("up-1", "up-2")))).containsOnlyKeys("up-1");

      assertThat(failure(store.getsAll(List.of("down-1", "down-2"))))
          .isInstanceOf(StoreException.class).isNotInstanceOf(PartialReadException.class)
          .hasMessageStartingWith("ARCUS getsAll failed: the server of a key is down (down/");
      assertThat(pool.requests).as("no request for the node that is down").hasSize(2);
    }

    /** A part the client cancels (its connection lost) fails its own keys only. */
    @Test
    void aFailedPartFailsItsOwnKeysOnly() {
      MemcachedNode first = ScriptedPool.node("first", true, false);
      MemcachedNode second = ScriptedPool.node("second", true, false);
      pool.nodes(List.of(first, second), key -> key.startsWith("a") ? first : second);
      pool.answerWith(request -> request.contains("a-1")
          ? Answer.reply(ScriptedPool.getsAnswer(List.of("a-1"), RawBytesTranscoder.FLAGS))
          : Answer.cancel("inactive node"));

      CompletableFuture<Map<String, StoreItem>> read =
          store.getsAll(List.of("a-1", "a-2", "b-1", "b-2"));

      assertThat(failure(read)).isInstanceOfSatisfying(PartialReadException.class, partial -> {
        assertThat(partial.failedKeys()).containsExactlyInAnyOrder("b-1", "b-2");
        assertThat(partial.found()).containsOnlyKeys("a-1");
      }).hasMessage("ARCUS getsAll failed for 2 of 4 keys: Cancelled (inactive node)")
          .hasCauseInstanceOf(CancellationException.class);
    }

    /** Every part cancelled: a plain failure, the first part's. */
    @Test
    void everyPartFailed_aPlainFailure() {
      MemcachedNode first = ScriptedPool.node("first", true, false);
      MemcachedNode second = ScriptedPool.node("second", true, false);
      pool.nodes(List.of(first, second), key -> key.startsWith("a") ? first : second);
      pool.answerWith(request -> Answer.cancel("inactive node"));

      assertThat(failure(store.getsAll(List.of("a-1", "b-1"))))
          .isInstanceOf(StoreException.class).isNotInstanceOf(PartialReadException.class)
          .hasMessage("ARCUS getsAll failed: Cancelled (inactive node)");
    }
  }

  @Nested
  class FlushPrefix {

    private final ArcusStore store = builder().build();

    @Test
    void flushPrefixIsSentToEveryNodeAndNotFoundCountsAsDone() {
      pool.nodes(List.of(ScriptedPool.node("a", true, false),
          ScriptedPool.node("b", true, false)), key -> null);
      pool.answerWith(request -> Answer.reply(pool.requests.size() == 1 ? "OK\r\n"
          : "NOT_FOUND\r\n"));

      assertThat(value(store.flushPrefix("user-name"))).isNull();
      assertThat(pool.requests).containsExactly("flush_prefix user-name\r\n",
          "flush_prefix user-name\r\n");
    }

    @Test
    void aServerThatDoesNotKnowTheCommandFailsTheFuture() {
      pool.answer(Answer.reply("ERROR\r\n"));

      assertThat(failure(store.flushPrefix("user-name")))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS flushPrefix failed: the server answered ERROR (it does not know"
              + " the command)");
    }

    @Test
    void aNodeThatIsDownFailsTheFutureAtOnce() {
      pool.nodes(List.of(ScriptedPool.node("a", true, false),
          ScriptedPool.node("b", false, false)), key -> null);
      pool.answer(Answer.silence());

      CompletableFuture<Void> flush = store.flushPrefix("user-name");

      assertThat(flush).isCompletedExceptionally();
      assertThat(failure(flush)).hasMessageStartingWith("ARCUS flushPrefix failed: Cancelled");
      assertThat(pool.silent).singleElement()
          .satisfies(operation -> assertThat(operation.isCancelled()).isTrue());
    }

    @Test
    void noNodesMeansNothingToFlush() {
      pool.nodes(List.of(), key -> null);

      assertThat(value(store.flushPrefix("user-name"))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-lead", "has:colon", "has space", "slash/ed", "ümlaut"})
    void anInvalidPrefixFailsTheFutureWithoutAnyRequest(String prefix) {
      assertThat(failure(store.flushPrefix(prefix))).isInstanceOf(StoreException.class)
          .hasMessageStartingWith("ARCUS flushPrefix failed: the ARCUS prefix");
      assertThat(pool.operations).isEmpty();
    }
  }

  @Nested
  class FailuresAndDeadlines {

    private final ArcusStore store =
        builder().operationTimeout(Duration.ofMillis(25)).build();

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#operations")
    void aServerThatDoesNotAnswerTimesOutTheFutureAndCancelsTheOperation(String name,
        Function<ArcusStore, CompletableFuture<?>> operation) {
      pool.answer(Answer.silence());
      long started = System.nanoTime();

      CompletableFuture<?> future = operation.apply(store);

      assertThat(failure(future))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS " + name + " timed out after 25 ms");
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .isGreaterThanOrEqualTo(Duration.ofMillis(25));
      await().atMost(PATIENCE).untilAsserted(() -> assertThat(pool.silent)
          .allSatisfy(op -> assertThat(op.isCancelled()).as("the client's operation").isTrue()));
    }

    /**
     * The deadline can fire while the client is still creating a broadcast's operations (a
     * loaded machine, once in a build): a part added after it is cancelled as it is added, not
     * left to wait for an answer nobody reads.
     */
    @Test
    void aFlushPrefixPartCreatedAfterTheDeadline_isCancelledToo() {
      pool.answer(Answer.silence());
      pool.beforeBroadcast = () -> {
        try {
          Thread.sleep(10 * 25); // ten times the timeout: the deadline fires meanwhile
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      };

      CompletableFuture<Void> flush = store.flushPrefix("user-name");

      assertThat(failure(flush)).hasMessage("ARCUS flushPrefix timed out after 25 ms");
      assertThat(pool.operations).isNotEmpty().allSatisfy(
          op -> assertThat(op.isCancelled()).as("the client's operation").isTrue());
      assertThat(pool.silent).as("none queued to wait for an answer").isEmpty();
    }

    @Test
    void anAnswerAfterTheTimeoutIsIgnored() {
      pool.answer(Answer.silence());
      // the operation reaches the client on the calling thread, before gets returns, unless the
      // 25 ms deadline fired first (a loaded machine, twice in builds): then it is never sent,
      // and there is no late answer to try. Another gets, until one was sent
      CompletableFuture<Optional<StoreItem>> gets = null;
      for (int attempt = 0; attempt < 50 && pool.operations.isEmpty(); attempt++) {
        gets = store.gets("k");
      }
      assertThat(pool.operations).as("a gets sent before its deadline, in 50 attempts")
          .isNotEmpty();
      assertThat(failure(gets)).hasMessage("ARCUS gets timed out after 25 ms");

      ScriptedPool.replyLate(pool.lastOperation(), "VALUE k 2048 2 9\r\nv1\r\nEND\r\n");

      assertThat(failure(gets)).hasMessage("ARCUS gets timed out after 25 ms");
    }

    @Test
    void cancellingTheFutureCancelsTheOperationAndItsLateAnswerIsIgnored() {
      ArcusStore patient = builder().operationTimeout(Duration.ofMinutes(1)).build();
      pool.answer(Answer.silence());
      CompletableFuture<Optional<StoreItem>> gets = patient.gets("k");

      assertThat(gets.cancel(true)).isTrue();
      Operation operation = pool.lastOperation();
      assertThat(operation.isCancelled()).isTrue();
      ScriptedPool.replyLate(operation, "END\r\n");

      assertThat(gets).isCancelled();
      assertThat(pool.operations).hasSize(1);
    }

    @Test
    void anOperationTheClientCancelsFailsTheFutureWithTheClientsReason() {
      pool.answer(Answer.cancel("inactive node"));

      CompletableFuture<Optional<StoreItem>> gets = store.gets("k");

      assertThat(gets).as("failed before gets returned").isCompletedExceptionally();
      assertThat(failure(gets))
          .isInstanceOf(StoreException.class)
          .hasMessage("ARCUS gets failed: Cancelled (inactive node)")
          .hasCauseInstanceOf(CancellationException.class);
    }

    @ParameterizedTest
    @MethodSource("io.sustainablecache.arcus.ArcusStoreTest#refusals")
    void aClientThatRefusesTheOperationFailsTheFutureInsteadOfThrowing(RuntimeException refusal,
        String reason) {
      pool.answer(Answer.refuse(refusal));
      // a patient store: with the class's 25 ms a loaded machine let the timeout win the race
      // with the refusal once ("ARCUS set timed out after 25 ms")
      ArcusStore patient = builder().operationTimeout(Duration.ofMinutes(1)).build();

      for (CompletableFuture<?> future : List.of(patient.gets("k"), patient.set("k", VALUE, 0),
          patient.getsAll(List.of("k")), patient.flushPrefix("p"))) {
        assertThat(failure(future))
            .isInstanceOf(StoreException.class)
            .hasMessageEndingWith(" failed: " + reason)
            .hasCause(refusal);
      }
    }
  }

  // -------------------------------------------------------------------------------------------

  static Stream<Arguments> casAnswers() {
    return Stream.of(
        Arguments.of("STORED", CasOutcome.STORED),
        Arguments.of("EXISTS", CasOutcome.EXISTS),
        Arguments.of("NOT_FOUND", CasOutcome.NOT_FOUND));
  }

  static Stream<Arguments> invalidKeys() {
    return Stream.of(
        Arguments.of("", "the key is empty"),
        Arguments.of("has space", "the key contains a space"),
        Arguments.of("line\nfeed", "the key contains a line break"),
        Arguments.of("nul\0byte", "the key contains a NUL character"),
        Arguments.of("k".repeat(251), "the key is longer than 250 bytes"),
        Arguments.of("é".repeat(126), "the key is longer than 250 bytes"),
        Arguments.of("tenant/a:key", "the ARCUS prefix (before ':') may contain only"
            + " [A-Za-z0-9_+.-]"),
        Arguments.of("-tenant:key", "the ARCUS prefix starts with '-'"));
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(new IllegalStateException("Shutting down"), "the client is shut down"),
        Arguments.of(new IllegalStateException("Timed out waiting to add GetsOperationImpl@1"
            + "(max wait=0ms)"), "the client's operation queue is full"));
  }

  static List<Arguments> operations() {
    return List.of(
        Arguments.of("gets", (Function<ArcusStore, CompletableFuture<?>>) s -> s.gets("k")),
        Arguments.of("getsAll",
            (Function<ArcusStore, CompletableFuture<?>>) s -> s.getsAll(List.of("k", "l"))),
        Arguments.of("add",
            (Function<ArcusStore, CompletableFuture<?>>) s -> s.add("k", VALUE, 1)),
        Arguments.of("set",
            (Function<ArcusStore, CompletableFuture<?>>) s -> s.set("k", VALUE, 1)),
        Arguments.of("cas",
            (Function<ArcusStore, CompletableFuture<?>>) s -> s.cas("k", 1L, VALUE, 1)),
        Arguments.of("delete", (Function<ArcusStore, CompletableFuture<?>>) s -> s.delete("k")),
        Arguments.of("flushPrefix",
            (Function<ArcusStore, CompletableFuture<?>>) s -> s.flushPrefix("p")));
  }

  private static boolean requested(String request, String key) {
    String keys = request.substring(request.indexOf(request.startsWith("mgets") ? '\n' : ' ')
        + 1).strip();
    return List.of(keys.split(" ")).contains(key);
  }

  private static int keyCount(String request) {
    if (request.startsWith("mgets ")) {
      return Integer.parseInt(request.substring(0, request.indexOf('\r')).split(" ")[2]);
    }
    return request.strip().split(" ").length - 1;
  }

  private static String request(Operation operation) {
    ByteBuffer buffer = operation.getBuffer().duplicate();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return new String(bytes, ISO_8859_1);
  }

  private static <T> T value(CompletableFuture<T> future) {
    try {
      return future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("expected a value", e);
    }
  }

  private static Throwable failure(CompletableFuture<?> future) {
    try {
      Object value = future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("expected a failure, got " + value);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError("expected a failure", e);
    }
  }
}
