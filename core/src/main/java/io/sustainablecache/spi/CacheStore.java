package io.sustainablecache.spi;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A remote store with memcached semantics: the service provider interface that the ARCUS and
 * spymemcached adapters implement and that {@link io.sustainablecache.SustainableCache} drives.
 *
 * <p><b>Asynchronous.</b> Every operation returns at once with a {@link CompletableFuture} and
 * never blocks the calling thread on the network. The cache calls it from request threads, from
 * its refresh executor and from the threads that complete loads, so <b>implementations must be
 * thread-safe</b>.
 *
 * <h2>Semantics</h2>
 * <ul>
 *   <li>Keys are already namespaced and validated by the cache: non-empty, printable ASCII without
 *       spaces, at most {@link #maxKeyLength()} bytes.</li>
 *   <li>Values are opaque byte arrays that the store must return byte-for-byte. Adapters store
 *       them raw (no serialization, no compression that changes what {@link #gets} returns). A
 *       value array handed to a write is not modified and not read after the returned future
 *       completes.</li>
 *   <li>{@code exptime} follows the memcached protocol: {@code 0} means no expiry, {@code 1} to
 *       {@code 2592000} (30 days) are relative seconds, larger values are an absolute Unix time
 *       in seconds; negative values expire the item at once. The cache computes it (and never
 *       sends a negative one); adapters pass it through unchanged, except that a negative one
 *       must reach the server as something it expires at once: ARCUS reads {@code -1} as
 *       "sticky" (never expires), so the memcached adapters send an absolute time in 1970
 *       instead ({@code CacheStoreContract} says what each server does).</li>
 *   <li><b>One failure channel.</b> Methods do not throw (except {@link NullPointerException} for
 *       a {@code null} argument). Connection loss, a timeout, a refused request or a server error
 *       complete the future exceptionally with a {@link StoreException}; a miss, a failed {@code
 *       add} or a failed {@code cas} are normal results.</li>
 *   <li><b>Bounded.</b> Every returned future completes, normally or exceptionally, within the
 *       adapter's operation timeout (plus scheduling jitter). An operation that timed out may
 *       still be applied by the server later; the cache's write protocol is built for that.</li>
 *   <li><b>Cancellation.</b> Cancelling a returned future is a hint: the adapter may drop the
 *       operation if it has not been sent yet. It never corrupts the connection.</li>
 *   <li><b>Completion threads.</b> Each adapter documents which threads complete its futures;
 *       for the ARCUS and spymemcached adapters it is the client's single I/O thread (or the
 *       shared deadline thread after a timeout, or the calling thread when the operation fails
 *       before it is sent). Dependent actions registered without an executor run there and
 *       hold up every other operation of the client meanwhile: they must be short and must not
 *       block; hand anything else to an executor with the {@code *Async} methods.</li>
 * </ul>
 *
 * <p>Every adapter must pass the shared contract suite in {@code sustainable-cache-testkit}
 * against a real memcached.
 */
public interface CacheStore {

  /**
   * Reads an item together with its CAS token (memcached {@code gets}).
   *
   * @param key a namespaced key; never {@code null}
   * @return a future of the item, or of empty when the key is absent or expired
   */
  CompletableFuture<Optional<StoreItem>> gets(String key);

  /**
   * Reads several items with their CAS tokens in as few round trips as the client allows
   * (memcached {@code gets k1 k2 ...}, one request per server). The default implementation issues
   * one {@link #gets} per key concurrently; adapters override it with the client's bulk read.
   *
   * <p><b>Partial failure.</b> When some keys could be read and others not (in a cluster, the
   * keys of a node that is down), the future fails with a {@link PartialReadException} that
   * carries the items of the keys read and names the keys that failed: the cache then treats
   * only those as failed reads, so that a dead node costs a {@code getAll} its own keys only. A
   * read that read no key fails with a plain {@link StoreException}, as does one whose
   * operation timeout passed. An implementation may also fail the whole read with a plain
   * {@code StoreException}; the cache then treats every key as a failed read.
   *
   * @param keys distinct namespaced keys; never {@code null}, may be empty
   * @return a future of a map holding the present keys only; absent keys are missing from it.
   *     The map may be mutable and is owned by the caller.
   */
  default CompletableFuture<Map<String, StoreItem>> getsAll(Collection<String> keys) {
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(new HashMap<>());
    }
    Map<String, StoreItem> found = new HashMap<>();
    Map<String, Throwable> failed = new HashMap<>();
    CompletableFuture<?>[] reads = new CompletableFuture<?>[keys.size()];
    int i = 0;
    for (String key : keys) {
      reads[i++] = gets(key).handle((item, failure) -> {
        synchronized (found) {
          if (failure != null) {
            failed.put(key, failure);
          } else {
            item.ifPresent(it -> found.put(key, it));
          }
        }
        return null;
      });
    }
    return CompletableFuture.allOf(reads).thenCompose(ignored -> {
      synchronized (found) {
        if (failed.isEmpty()) {
          return CompletableFuture.completedFuture(found);
        }
        Throwable first = failed.values().iterator().next();
        while (first instanceof CompletionException && first.getCause() != null) {
          first = first.getCause();
        }
        if (failed.size() == keys.size()) {
          return CompletableFuture.failedFuture(first instanceof StoreException store ? store
              : new StoreException("getsAll failed: every key's gets failed", first));
        }
        return CompletableFuture.failedFuture(new PartialReadException("getsAll failed for "
            + failed.size() + " of " + keys.size() + " keys: their gets failed", first, found,
            failed.keySet()));
      }
    });
  }

  /**
   * Stores the value only if the key is absent (memcached {@code add}).
   *
   * @param key a namespaced key; never {@code null}
   * @param value the bytes to store; never {@code null}
   * @param exptime memcached exptime, see the class documentation
   * @return a future of {@code true} if stored, {@code false} if the key already existed
   */
  CompletableFuture<Boolean> add(String key, byte[] value, int exptime);

  /**
   * Stores the value unconditionally (memcached {@code set}).
   *
   * @param key a namespaced key; never {@code null}
   * @param value the bytes to store; never {@code null}
   * @param exptime memcached exptime, see the class documentation
   * @return a future completing when the server stored the item; exceptionally also when the
   *     server refuses it (for example because it exceeds the server's item size)
   */
  CompletableFuture<Void> set(String key, byte[] value, int exptime);

  /**
   * Stores the value only if the item is unchanged since the {@link #gets} that returned
   * {@code casToken} (memcached {@code cas}).
   *
   * @param key a namespaced key; never {@code null}
   * @param casToken the token from {@link StoreItem#casToken()}
   * @param value the bytes to store; never {@code null}
   * @param exptime memcached exptime, see the class documentation
   * @return a future of {@link CasOutcome#STORED}, or of why it was not stored
   */
  CompletableFuture<CasOutcome> cas(String key, long casToken, byte[] value, int exptime);

  /**
   * Removes the item (memcached {@code delete}).
   *
   * @param key a namespaced key; never {@code null}
   * @return a future of {@code true} if an item was removed, {@code false} if there was none
   */
  CompletableFuture<Boolean> delete(String key);

  /**
   * Adds {@code delta} to the counter under {@code key} and returns its new value (memcached
   * {@code incr}). When the key is absent the counter is first created with the value {@code
   * initial} and the expiry {@code exptime} (with {@code add}), and {@code initial} is returned;
   * if another client created it meanwhile, the {@code incr} is sent again. Increments are atomic
   * on the server: concurrent calls, from any client, get distinct values. The counter is the
   * item's value in decimal ASCII digits, 64 bits without sign, wrapping as memcached does; the
   * result carries the same 64 bits. An {@code incr} does not change the item's expiry.
   *
   * <p>The default implementation completes exceptionally with an {@link
   * UnsupportedOperationException}: a store without counters cannot carry what needs one. A
   * store that implements it also answers {@code true} from {@link #hasCounters()}.
   *
   * @param key a namespaced key; never {@code null}
   * @param delta what to add, at least 0
   * @param initial the value of a counter this call creates, at least 0
   * @param exptime memcached exptime of a counter this call creates, see the class documentation
   * @return a future of the counter's value after this call; exceptionally when the item holds
   *     no number, or when a counter created by another client vanished before this call could
   *     increment it
   * @throws NullPointerException if {@code key} is {@code null}
   * @throws IllegalArgumentException if {@code delta} or {@code initial} is negative
   */
  default CompletableFuture<Long> incr(String key, int delta, long initial, int exptime) {
    Objects.requireNonNull(key, "key");
    if (delta < 0 || initial < 0) {
      throw new IllegalArgumentException(
          "delta and initial must not be negative: " + delta + ", " + initial);
    }
    return CompletableFuture.failedFuture(new UnsupportedOperationException(
        getClass().getSimpleName() + " has no counters (memcached incr)"));
  }

  /**
   * Whether this store has counters: whether {@link #incr} works. The near cache needs them (its
   * invalidation log numbers its records with {@code incr}); building a cache with a near cache
   * over a store without them fails at once. The default answers {@code false}, as {@code incr}'s
   * default refuses: a store that implements {@code incr} overrides both. A wrapper of another
   * store forwards both, so that a wrapper of a store without counters has none either.
   *
   * @return whether {@link #incr} is implemented; the same answer for the store's lifetime
   */
  default boolean hasCounters() {
    return false;
  }

  /**
   * Removes every item whose key starts with {@code prefix + ":"} (ARCUS {@code flush_prefix}).
   * Plain memcached has no such command; the default implementation completes exceptionally with
   * an {@link UnsupportedOperationException} that says so.
   *
   * @param prefix an ARCUS key prefix (a cache's namespace); never {@code null}
   * @return a future completing when the server removed the items
   * @throws NullPointerException if {@code prefix} is {@code null}
   */
  default CompletableFuture<Void> flushPrefix(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    return CompletableFuture.failedFuture(new UnsupportedOperationException(
        getClass().getSimpleName() + " cannot remove all keys of a prefix: memcached has no"
            + " command for it (ARCUS servers have flush_prefix, through ArcusStore)"));
  }

  /**
   * Whether {@code thread} is one of the threads that complete this store's futures (a client's
   * I/O thread, a thread that fails operations at their timeout). The cache's synchronous methods
   * called on such a thread never wait for the store, since the answer they would wait for can
   * only come from that thread once they have returned (see {@link
   * io.sustainablecache.SustainableCache}, "Calls on the store's threads"). The default answers
   * {@code false}: a store whose futures complete on threads of their own should name them.
   *
   * @param thread a thread; never {@code null}
   * @return whether waiting on {@code thread} for this store's answers would stall them
   */
  default boolean isCompletionThread(Thread thread) {
    return false;
  }

  /**
   * The store's nodes, for a store that spreads keys over several servers and fails a dead
   * server's operations at once (memcached clients with {@code FailureMode.Cancel}). With it,
   * the near cache keeps an invalidation log per node, so that a dead node costs only the keys
   * it holds; without it (the default, and for a client that sends a dead node's keys to
   * another), one log for the namespace. A wrapper of another store forwards it.
   *
   * <p>Return the same snapshot object for as long as the client's node list is unchanged, and
   * another one once it changed, also when the addresses are the same (a node dropped and added
   * again is another connection): the near cache (and the namespace's generation) re-reads every
   * node's log whenever it is handed another snapshot.
   *
   * @return the current snapshot of the node list, or empty (the default)
   */
  default Optional<StoreNodes> nodes() {
    return Optional.empty();
  }

  /**
   * The longest key, in bytes, this store accepts. The cache rejects longer keys before any
   * network call. Defaults to memcached's 250.
   *
   * @return a positive number of bytes
   */
  default int maxKeyLength() {
    return 250;
  }
}
