package io.sustainablecache.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.Lookup;
import io.sustainablecache.SustainableCache;
import io.sustainablecache.SustainableCacheBuilder;
import io.sustainablecache.ValueCodec;
import io.sustainablecache.spi.CacheStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 24, defect 1: every public method of a {@link SustainableCache} returns promptly when
 * called on a thread that delivers the store's answers: the client's I/O thread (inside a
 * dependent action of a store future, as an application's callback or Spring's reactive caching
 * runs there) and the shared scheduler's thread. Waiting there for the store would stall every
 * other operation of the client until the operation timeout, and the answer could only come
 * after. "Promptly" is under {@value #PROMPT_MILLIS} ms, with an operation timeout of {@value
 * #OPERATION_TIMEOUT_MILLIS} ms; a write issued there is visible afterwards.
 *
 * <p>Subclasses create stores over their client, against a real memcached.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class CompletionThreadContract extends ServerContract {

  /**
   * Half the operation timeout: a call that waited there for the store would take the whole
   * timeout (its answer can only come after it), a prompt one takes milliseconds. (It was 300
   * ms until a loaded machine took 355 and 393 ms for prompt calls, 2026-11-29.)
   */
  static final long PROMPT_MILLIS = 1_000;
  static final long OPERATION_TIMEOUT_MILLIS = 2_000;

  private final String namespace = "ct-" + UUID.randomUUID().toString().substring(0, 8);

  /** Creates the contract; subclasses are instantiated by JUnit. */
  protected CompletionThreadContract() {}


  private CacheStore newStore() {
    return newStore(Duration.ofMillis(OPERATION_TIMEOUT_MILLIS));
  }

  private SustainableCacheBuilder<String> builder(CacheStore store, boolean near) {
    SustainableCacheBuilder<String> builder = SustainableCache.builder(store)
        .namespace(namespace + (near ? "n" : "p")).ttl(Duration.ofMinutes(5))
        .codec(ValueCodec.utf8());
    return near ? builder.nearCache(1_000, Duration.ofSeconds(1), 0) : builder;
  }

  private SustainableCache<String> cache(CacheStore store, boolean near) {
    SustainableCache<String> cache = builder(store, near).build();
    closeAfter(cache);
    return cache;
  }

  @Test
  void everyMethodReturnsPromptly_onTheClientsIoThread() throws Exception {
    everyMethodReturnsPromptly(false, true);
  }

  @Test
  void everyMethodReturnsPromptly_onTheClientsIoThread_withANearCache() throws Exception {
    everyMethodReturnsPromptly(true, true);
  }

  @Test
  void everyMethodReturnsPromptly_onTheSharedSchedulersThread() throws Exception {
    everyMethodReturnsPromptly(false, false);
  }

  @Test
  void everyMethodReturnsPromptly_onTheSharedSchedulersThread_withANearCache()
      throws Exception {
    everyMethodReturnsPromptly(true, false);
  }

  @Test
  void theStoreNamesItsIoThread_butNotACallersThread() throws Exception {
    CacheStore store = newStore();
    Thread io = ClientThreads.onCompletionThread(store, Thread::currentThread);
    assertThat(store.isCompletionThread(io)).as(io.getName()).isTrue();
    assertThat(store.isCompletionThread(Thread.currentThread())).isFalse();
  }

  private void everyMethodReturnsPromptly(boolean near, boolean ioThread) throws Exception {
    CacheStore store = newStore();
    SustainableCache<String> cache = cache(store, near);
    cache.put("hit", "cached");
    io.sustainablecache.WriteFence<String> pending = cache.fence("fenced"); // completed there
    // the keys the calls there write; each one's value is checked afterwards from this thread
    Map<String, Long> took = new LinkedHashMap<>();
    Map<String, Object> answers = new LinkedHashMap<>();
    Consumer<Runnable> there = ioThread ? task -> ClientThreads.onCompletionThread(store, () -> {
      task.run();
      return null;
    }) : ClientThreads::onSchedulerThread;
    there.accept(() -> {
      time(took, answers, "get(hit)", () -> cache.get("hit", k -> "loaded"));
      time(took, answers, "get(miss)", () -> cache.get("miss1", k -> "loaded"));
      time(took, answers, "find(miss)", () -> cache.find("miss2", k -> "loaded"));
      time(took, answers, "getAsync", () -> cache.getAsync("miss3",
          k -> CompletableFuture.completedFuture("loaded")));
      time(took, answers, "findAsync", () -> cache.findAsync("miss4",
          k -> CompletableFuture.completedFuture("loaded")));
      time(took, answers, "getAll", () -> cache.getAll(List.of("hit", "miss5"),
          keys -> keys.stream().collect(Collectors.toMap(k -> k, k -> "loaded"))));
      time(took, answers, "getAllAsync", () -> cache.getAllAsync(List.of("miss6"),
          keys -> CompletableFuture.completedFuture(Map.of("miss6", "loaded"))));
      time(took, answers, "getIfPresent", () -> cache.getIfPresent("hit"));
      time(took, answers, "getIfPresentAsync", () -> cache.getIfPresentAsync("hit"));
      time(took, answers, "lookup", () -> cache.lookup("hit"));
      time(took, answers, "lookupAsync", () -> cache.lookupAsync("hit"));
      time(took, answers, "put", () -> {
        cache.put("put", "written there");
        return null;
      });
      time(took, answers, "putNoValue", () -> {
        cache.putNoValue("absent");
        return null;
      });
      time(took, answers, "putIfAbsent", () -> cache.putIfAbsent("added", "added there"));
      time(took, answers, "invalidate", () -> {
        cache.invalidate("hit");
        return null;
      });
      time(took, answers, "fence", () -> {
        try {
          return cache.fence("refused-fence");
        } catch (IllegalStateException refused) { // it would have to wait for the store
          return "refused";
        }
      });
      time(took, answers, "WriteFence.committed", () -> {
        pending.committed();
        return null;
      });
      time(took, answers, "stats", cache::stats);
      time(took, answers, "build", () -> {
        SustainableCache<String> built = builder(store, near).build();
        closeAfter(built);
        return built;
      });
    });
    assertThat(took).as("milliseconds each call took there").allSatisfy((call, millis) ->
        assertThat(millis).as(call).isLessThan(PROMPT_MILLIS));
    assertThat(answers.get("get(miss)")).isEqualTo("loaded");
    assertThat(answers.get("find(miss)")).isEqualTo(Optional.of("loaded"));
    assertThat(answers.get("fence")).isEqualTo("refused");
    // there, a key the near cache does not hold is a miss: the loader's value, not written
    assertThat(answers.get("getAll")).asInstanceOf(InstanceOfAssertFactories.MAP)
        .containsOnlyKeys("hit", "miss5").containsEntry("miss5", "loaded");

    await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
      assertThat(cache.getIfPresent("put")).as("the put issued there").contains("written there");
      assertThat(cache.lookup("absent")).as("the putNoValue issued there")
          .isEqualTo(new Lookup.NoValue<>());
      assertThat(cache.getIfPresent("added")).as("the putIfAbsent issued there")
          .contains("added there");
      assertThat(cache.getIfPresent("hit")).as("the invalidate issued there").isEmpty();
      cache.get("fenced", k -> "after the commit");
      assertThat(cache.getIfPresent("fenced")).as("the fence's release issued there: cached")
          .contains("after the commit");
    });

    // the namespace-wide and closing calls, last
    there.accept(() -> {
      // a new generation, with a near cache or without one (the default), on any store
      time(took, answers, "invalidateAll", () -> {
        cache.invalidateAll();
        return null;
      });
      time(took, answers, "close", () -> {
        cache.close();
        return null;
      });
    });
    assertThat(took).allSatisfy((call, millis) ->
        assertThat(millis).as(call).isLessThan(PROMPT_MILLIS));
    await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
        assertThat(cache.getIfPresent("put")).as("after the invalidateAll issued there")
            .isEmpty());
  }

  private static void time(Map<String, Long> took, Map<String, Object> answers, String call,
      Callable<?> action) {
    long start = System.nanoTime();
    Object answer;
    try {
      answer = action.call();
    } catch (Exception e) {
      throw new AssertionError(call + " failed", e);
    }
    took.put(call, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    answers.put(call, answer);
  }
}
