package io.sustainablecache.internal;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.CacheStore;
import io.sustainablecache.spi.StoreException;
import io.sustainablecache.spi.StoreItem;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;

/**
 * The invalidation log of one namespace in the shared store, or of one node of it (a log per
 * node, {@link NearTier.Layout}: the same protocol on each node's own items), which the near
 * tiers of every instance poll (design and argument: {@code docs/near-cache.md}). A change is <em>recorded</em>:
 * the log's sequence, a memcached counter, is {@code incr}emented to {@code n} and slot {@code n
 * mod S} is set to {@code (n, store key)}. A <em>poll</em> reads the sequence, the namespace's
 * {@linkplain Generation generation} and the slots after the last number it applied in one
 * multi-get (two when more than {@link #BATCH} changes happened) and returns what its near tier
 * must drop: the keys of a gapless run of records, or everything when it cannot confirm it saw
 * every change since its last poll (a slot overwritten by a later record, a record counted
 * before the previous poll read the sequence and still not written, the sequence lost and
 * re-created, too many changes, a sequence that is no number). A slot that is missing or holds
 * an earlier cycle's record, of a number counted since the previous poll read the sequence (most
 * often a record whose writer has counted it and not yet written it), ends the run early: the
 * poll returns the records before it ({@link Poll.Partial}), having applied every record the
 * previous poll counted, and the next poll continues from it. So at most one poll in a row stops
 * short of what the poll before it counted: a record still missing when the next poll reads it
 * resets, whether it is the one the previous poll stopped at or a later one it did not reach. A
 * poll that finds no sequence creates it (an {@code incr} of 0) and resets.
 *
 * <p>{@code invalidateAll} is recorded as a new generation: the number {@code n} its {@code incr}
 * returned is written to the generation's item, then to its slot as the mark {@code ALL}. A poll
 * returns the number of the last {@code ALL} of its run, or else the generation's item. A poll
 * that finds no generation (never written, or lost) creates one at a random value: entries of
 * the lost one become misses, never valid again.
 *
 * <p>The sequence is created by the first {@code incr} at a random value in [2<sup>40</sup>,
 * 2<sup>50</sup>), so that a sequence lost to eviction or a restart comes back far from any
 * value a reader applied, and readers notice (a lower value, or a jump of more than {@link
 * #SLOTS}). A sequence's item that holds no number a counter can use (planted, or
 * overwritten by another program) is replaced by a poll with a fresh random value, which readers
 * notice the same way.
 *
 * <p>Thread-safe. Polls do not overlap: a poll asked for while one runs returns the running one.
 * Records may be concurrent with each other and with polls.
 */
final class NearLog {

  /** The number of slots: at most this many changes between two polls are applied one by one. */
  static final int SLOTS = 4096;

  /** The slots a poll reads together with the sequence, in its first round trip. */
  static final int BATCH = 32;

  /** The expiry of a slot, seconds: long enough for any poller that is not paused for an hour. */
  static final int SLOT_EXPTIME = 3600;

  private static final long MIN_BASE = 1L << 40;
  private static final long MAX_BASE = 1L << 50;
  /** The record of {@code invalidateAll}: the mark no store key contains. */
  private static final String ALL = Keys.INTERNAL_MARK + "all";

  /** What a poll found. */
  sealed interface Poll {

    /** The namespace's generation: positive. */
    long generation();

    /**
     * A gapless run of records since the last poll (possibly empty).
     *
     * @param sequence the sequence number read, now applied
     * @param keys the store keys changed, in order, duplicates possible
     * @param generation the generation (the last {@code invalidateAll} of the run, or the
     *     generation's item)
     */
    record Changes(long sequence, List<String> keys, long generation) implements Poll {}

    /**
     * The records before a slot found missing whose number was counted after the previous poll
     * read the sequence: the poll cannot confirm it saw every change up to the sequence it read,
     * but it applied every record the previous poll counted (its near tier confirms from the
     * previous poll's start), and drops what it saw; the next poll continues from the missing
     * slot, and resets if that slot, or any other up to {@code read}, is still missing.
     *
     * @param sequence the number of the last record applied (the one before the missing slot)
     * @param keys the store keys changed, in order, duplicates possible
     * @param generation as for {@link Changes}
     * @param missing the number whose slot was missing
     * @param read the sequence number the poll read: the next poll resets at a record up to it
     *     that it finds missing
     */
    record Partial(long sequence, List<String> keys, long generation, long missing, long read)
        implements Poll {}

    /**
     * The poll cannot confirm that it saw every change: the near tier drops everything.
     *
     * @param sequence the sequence number read, from which the next poll continues
     * @param reason why, for the log
     * @param generation the generation's item
     */
    record Reset(long sequence, String reason, long generation) implements Poll {}
  }

  private final CacheStore store;
  private final String sequenceKey;
  private final String generationKey;
  private final String slotPrefix;
  private final RandomGenerator random;
  /** The other layout's sequence ({@link #SINGLE} or {@link #PER_NODE}), read by every poll. */
  private final String otherSequenceKey;
  /** Run when the other layout's sequence changed between two polls: someone writes it. */
  private final Runnable otherLayoutWrites;
  /** The other layout's sequence at the last poll: -1 before, 0 if absent or no number. */
  private long otherSeen = -1;

  /**
   * Whether this log reads and records generations only ({@link #generationOnly}): its polls read
   * the generation's item alone, and it records no key.
   */
  private final boolean generationOnly;

  /** The last sequence number applied; {@code null} before the first poll, or after garbage. */
  private Long lastSeen;

  /**
   * The sequence number the last poll read (0 before, or after garbage): a record up to it that
   * a poll finds missing resets, as its writer had counted it before that poll.
   */
  private long lastRead;

  /**
   * The numbers of this instance's own records, each at its slot's index: a poll skips them
   * (this instance applied its own change when it made it), so its readers do not drop an entry
   * read after it. A poll asks about at most {@link #SLOTS} numbers after the last it applied,
   * so an index holds the only own record a poll can ask about, until a later own record of the
   * same index replaces it (a poll that still needed the earlier one resets anyway: its slot was
   * overwritten too). Constant memory (32 KiB; none for a generation-only log); nothing to prune.
   */
  private final AtomicLongArray ownRecords;

  private final AtomicReference<CompletableFuture<Poll>> running = new AtomicReference<>();

  /** The name of the namespace's single log's items: {@code <ns>:\x7Fnear:…}. */
  static final String SINGLE = "near";

  /**
   * The name of the items of a log per node ({@code <ns>:\x7Fnearn:…} on every node), apart
   * from the single log's, so that the two layouts never read each other's items.
   */
  static final String PER_NODE = "nearn";

  /** The namespace's single log in {@code store}. */
  NearLog(CacheStore store, Keys keys, RandomGenerator random) {
    this(store, keys, SINGLE, random);
  }

  /**
   * A log in {@code store} (the whole store, or one node's: {@link
   * io.sustainablecache.spi.StoreNodes#on}) whose items are named {@code <ns>:\x7F<name>:…}.
   */
  NearLog(CacheStore store, Keys keys, String name, RandomGenerator random) {
    this(store, keys, name, random, () -> { });
  }

  /**
   * A log as above that runs {@code otherLayoutWrites} (on the polling thread) when a poll finds
   * that the other layout's sequence ({@code SINGLE}'s for {@code PER_NODE}, and the reverse)
   * changed since the previous poll: an instance of the namespace on the other layout is
   * recording changes this one does not read.
   */
  NearLog(CacheStore store, Keys keys, String name, RandomGenerator random,
      Runnable otherLayoutWrites) {
    this(store, keys, name, random, otherLayoutWrites, false);
  }

  private NearLog(CacheStore store, Keys keys, String name, RandomGenerator random,
      Runnable otherLayoutWrites, boolean generationOnly) {
    this.generationOnly = generationOnly;
    this.ownRecords = new AtomicLongArray(generationOnly ? 0 : SLOTS);
    this.store = requireNonNull(store, "store");
    this.sequenceKey = keys.internalKey(name + ":seq");
    this.generationKey = keys.internalKey(name + ":gen");
    this.slotPrefix = keys.internalKey(name + ":");
    this.random = requireNonNull(random, "random");
    this.otherSequenceKey = keys.internalKey((name.equals(SINGLE) ? PER_NODE : SINGLE) + ":seq");
    this.otherLayoutWrites = requireNonNull(otherLayoutWrites, "otherLayoutWrites");
  }

  /**
   * The log of a cache without a near cache whose {@code invalidateAll} is a new generation
   * ({@code invalidateAllBound}): the same generation's item under the same name, but its polls
   * read that item alone (one key, one round trip, no sequence, no slot) and return {@link
   * Poll.Changes} of no key at sequence 0, and it records only {@code invalidateAll}, as one
   * {@code incr} of the generation's item ({@link #recordAll}; a near-cached instance's poll
   * reads that item too). {@link #record} refuses.
   */
  static NearLog generationOnly(CacheStore store, Keys keys, String name, RandomGenerator random) {
    return new NearLog(store, keys, name, random, () -> { }, true);
  }

  // ---------------------------------------------------------------------------------------------
  // Writers

  /**
   * Records a change of one key: completes once the record is in the store, or fails with the
   * store's failure (then the caller must not promise the bound).
   */
  CompletableFuture<Void> record(String storeKey) {
    requireNonNull(storeKey, "storeKey");
    if (generationOnly) {
      throw new IllegalStateException("a generation-only log records no key");
    }
    return append(storeKey);
  }

  /**
   * Records {@code invalidateAll}: a new generation, which every near tier (this one included:
   * the record is not skipped as its own) adopts at its next poll, dropping everything.
   */
  CompletableFuture<Void> recordAll() {
    if (generationOnly) {
      // One incr of the generation's item: always another value than the one it replaces (a
      // missing item is created at a random one), read by every log's poll of the namespace.
      return store.incr(generationKey, 1, base(), 0).thenApply(n -> null);
    }
    return store.incr(sequenceKey, 1, base(), 0).thenCompose(n ->
        store.set(generationKey, ascii(Long.toUnsignedString(n)), 0)
            .thenCompose(done -> writeSlot(n, ALL)));
  }

  private CompletableFuture<Void> append(String storeKey) {
    return store.incr(sequenceKey, 1, base(), 0).thenCompose(n -> {
      ownRecords.set(index(n), n);
      return writeSlot(n, storeKey);
    });
  }

  private CompletableFuture<Void> writeSlot(long n, String what) {
    return store.set(slotKey(n), ascii(Long.toUnsignedString(n) + " " + what), SLOT_EXPTIME);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  // ---------------------------------------------------------------------------------------------
  // Readers

  /**
   * Polls the log. The future fails with the store's failure; then nothing was applied, and the
   * next poll continues from the same point.
   */
  CompletableFuture<Poll> poll() {
    CompletableFuture<Poll> mine = new CompletableFuture<>();
    CompletableFuture<Poll> other = running.compareAndExchange(null, mine);
    if (other != null) {
      return other;
    }
    CompletableFuture<Poll> result;
    try {
      result = readFrom(lastSeen);
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    result.whenComplete((poll, failure) -> {
      if (poll != null) {
        lastSeen = poll instanceof Poll.Reset reset && reset.reason().equals(GARBAGE)
            ? null : sequenceOf(poll);
        lastRead = poll instanceof Poll.Partial partial ? partial.read() : sequenceOf(poll);
      }
      running.set(null);
      if (failure != null) {
        mine.completeExceptionally(failure);
      } else {
        mine.complete(poll);
      }
    });
    return mine;
  }

  /** The reason of the reset when the store held no sequence (the poll created it). */
  static final String NO_LOG = "no sequence in the store (never written, evicted or lost)";

  /**
   * The reason of the reset when the sequence's item holds no number (or one this log never
   * writes); the poll replaces it with a fresh sequence, so the log works again.
   */
  static final String GARBAGE = "the sequence's item holds no number";

  private CompletableFuture<Poll> readFrom(Long last) {
    if (generationOnly) {
      return store.gets(generationKey)
          .thenCompose(item -> generation(item.orElse(null)))
          .thenApply(generation -> (Poll) new Poll.Changes(0, List.of(), generation));
    }
    List<String> keys = new ArrayList<>(BATCH + 2);
    keys.add(sequenceKey);
    keys.add(generationKey);
    keys.add(otherSequenceKey);
    if (last != null) {
      for (int i = 1; i <= BATCH; i++) {
        addUnlessOwn(keys, last + i);
      }
    }
    return store.getsAll(keys).thenCompose(items -> {
      checkOtherLayout(items.get(otherSequenceKey));
      return generation(items.get(generationKey))
          .thenCompose(generation -> readFrom(last, items, generation));
    });
  }

  /**
   * Tells of the other layout's sequence changing between two polls (it stays in the store after
   * a fleet moved to this layout, unchanged: only a change means someone writes it).
   */
  private void checkOtherLayout(StoreItem item) {
    long seen = item == null ? 0 : number(item);
    if (otherSeen >= 0 && seen != otherSeen && seen != 0) {
      otherLayoutWrites.run();
    }
    otherSeen = seen;
  }

  /** The generation the item holds; created at a random value if it is missing or garbage. */
  private CompletableFuture<Long> generation(StoreItem item) {
    long held = item == null ? 0 : number(item);
    if (held > 0) {
      return CompletableFuture.completedFuture(held);
    }
    long created = base();
    byte[] bytes = ascii(Long.toString(created));
    CompletableFuture<Boolean> written = item == null ? store.add(generationKey, bytes, 0)
        : store.set(generationKey, bytes, 0).thenApply(done -> true);
    return written.thenCompose(stored -> stored ? CompletableFuture.completedFuture(created)
        : store.gets(generationKey).thenApply(again -> {
          long other = again.map(NearLog::number).orElse(0L);
          if (other <= 0) {
            throw new StoreException("the near log's generation was created by another"
                + " instance and is gone or unreadable again");
          }
          return other;
        }));
  }

  /**
   * The positive number an item holds, or 0 if it holds none. Numbers of 2<sup>63</sup> and more
   * count as none: memcached 1.6.18 may refuse to {@code incr} them (its parser looks for a minus
   * sign past the value's end, in whatever memory follows), and this log never writes them.
   */
  private static long number(StoreItem item) {
    try {
      long n = Long.parseUnsignedLong(new String(item.value(), StandardCharsets.US_ASCII).trim());
      return n > 0 ? n : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private CompletableFuture<Poll> readFrom(Long last, Map<String, StoreItem> items,
      long generation) {
    StoreItem sequenceItem = items.get(sequenceKey);
    if (sequenceItem == null) {
      // Create it (an incr of 0), so that a namespace without writers has a log to confirm.
      return store.incr(sequenceKey, 0, base(), 0)
          .thenApply(created -> (Poll) new Poll.Reset(created, NO_LOG, generation));
    }
    long sequence = number(sequenceItem);
    if (sequence == 0) {
      // Nothing can count on it (incr fails), so replace it; readers reset as for a lost log.
      return store.cas(sequenceKey, sequenceItem.casToken(), ascii(Long.toString(base())), 0)
          .thenApply(outcome -> (Poll) new Poll.Reset(0, GARBAGE, generation));
    }
    if (last == null) {
      return done(new Poll.Reset(sequence, "first poll", generation));
    }
    if (Long.compareUnsigned(sequence, last) < 0) {
      return done(new Poll.Reset(sequence, "the sequence went back: lost and re-created",
          generation));
    }
    long count = sequence - last;
    if (Long.compareUnsigned(count, SLOTS) > 0) {
      return done(new Poll.Reset(sequence, count + " changes since the last poll, more than "
          + SLOTS + " slots (or the sequence was lost and re-created)", generation));
    }
    if (count <= BATCH) {
      return done(apply(last, sequence, items, generation));
    }
    List<String> rest = new ArrayList<>();
    for (long m = last + BATCH + 1; m <= sequence; m++) {
      addUnlessOwn(rest, m);
    }
    if (rest.isEmpty()) {
      return done(apply(last, sequence, items, generation));
    }
    return store.getsAll(rest).thenApply(more -> {
      Map<String, StoreItem> all = new HashMap<>(items);
      all.putAll(more);
      return apply(last, sequence, all, generation);
    });
  }

  /**
   * The records {@code (last, sequence]}, if each slot holds its own number; the records before
   * a missing slot counted since the last poll read the sequence (a write most likely in
   * flight); else a reset.
   */
  private Poll apply(long last, long sequence, Map<String, StoreItem> items, long generation) {
    List<String> changed = new ArrayList<>((int) (sequence - last));
    long lastAll = 0;
    for (long m = last + 1; m <= sequence; m++) {
      if (ownRecords.get(index(m)) == m) {
        continue; // this instance's own change, applied when it was made
      }
      StoreItem slot = items.get(slotKey(m));
      String record = slot == null ? null
          : new String(slot.value(), StandardCharsets.US_ASCII);
      String prefix = Long.toUnsignedString(m) + " ";
      if (record == null || !record.startsWith(prefix) || record.length() == prefix.length()) {
        boolean notYetWritten = record == null || holdsAnEarlierRecord(record, m);
        if (notYetWritten && Long.compareUnsigned(m, lastRead) > 0) { // most often in flight
          return new Poll.Partial(m - 1, List.copyOf(changed),
              lastAll != 0 ? lastAll : generation, m, sequence);
        }
        return new Poll.Reset(sequence, "record " + Long.toUnsignedString(m) + (notYetWritten
            ? " is still missing at the poll after the one that counted it (evicted, its writer"
                + " failed after counting it, or its write is slower than the polls)"
            : " was overwritten or is not a record"), generation);
      }
      String key = record.substring(prefix.length());
      if (key.equals(ALL)) {
        lastAll = m; // its writer may not have written the generation's item yet
      } else {
        changed.add(key);
      }
    }
    return new Poll.Changes(sequence, List.copyOf(changed), lastAll != 0 ? lastAll : generation);
  }

  /** Whether a slot holds a record of a number before {@code m}: one of an earlier cycle. */
  private static boolean holdsAnEarlierRecord(String record, long m) {
    int space = record.indexOf(' ');
    try {
      return space > 0
          && Long.compareUnsigned(Long.parseUnsignedLong(record.substring(0, space)), m) < 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private long base() {
    return random.nextLong(MIN_BASE, MAX_BASE);
  }

  private String slotKey(long n) {
    return slotPrefix + index(n);
  }

  /** Adds record {@code m}'s slot to a read, unless it is this instance's own (skipped). */
  private void addUnlessOwn(List<String> keys, long m) {
    if (ownRecords.get(index(m)) != m) {
      keys.add(slotKey(m));
    }
  }

  /** How many of this instance's own record numbers are kept (for tests): at most the slots. */
  int ownRecordsKept() {
    int kept = 0;
    for (int i = 0; i < ownRecords.length(); i++) {
      kept += ownRecords.get(i) != 0 ? 1 : 0;
    }
    return kept;
  }

  private static int index(long n) {
    return (int) Long.remainderUnsigned(n, SLOTS);
  }

  /** The number of the last record a poll applied (or skipped, for a reset). */
  static long sequenceOf(Poll poll) {
    if (poll instanceof Poll.Changes changes) {
      return changes.sequence();
    }
    return poll instanceof Poll.Partial partial ? partial.sequence()
        : ((Poll.Reset) poll).sequence();
  }

  private static CompletableFuture<Poll> done(Poll poll) {
    return CompletableFuture.completedFuture(poll);
  }
}
