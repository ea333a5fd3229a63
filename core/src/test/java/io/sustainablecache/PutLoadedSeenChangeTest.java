package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.internal.Envelope;
import io.sustainablecache.testing.FakeClock;
import io.sustainablecache.testing.FixedRandom;
import io.sustainablecache.testing.InMemoryStore;
import io.sustainablecache.testing.ManualExecutor;
import io.sustainablecache.testing.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, part 3: {@link SustainableCache#putLoaded(String, Object, ReadStart)} with a start on
 * the cache's ticker caches a key again one read after a change instead of {@code maxClockSkew}
 * after it, without ever caching a row read before a commit after that commit's invalidation.
 * The rule: a tombstone (or absence) this instance saw in the store, through a {@code putLoaded}
 * it kept out, before a read began (on the ticker) was written before that read, so it may be
 * written over, conditionally on that very item. Two caches over one {@link InMemoryStore} are
 * two hosts; time is virtual, and a change and a read can fall in the same millisecond.
 */
final class PutLoadedSeenChangeTest {

  private static final Duration TTL = Duration.ofMinutes(10);
  private static final Duration SKEW = Duration.ofSeconds(2);

  private final FakeClock clock = FakeClock.atRoundSecond();
  private final ManualScheduler scheduler = ManualScheduler.on(clock.ticker());
  private final InMemoryStore server = InMemoryStore.create(clock);
  private final List<SustainableCache<String>> caches = new ArrayList<>();
  private final SustainableCache<String> writer = cache();
  private final SustainableCache<String> reader = cache();

  private SustainableCache<String> cache() {
    SustainableCache<String> cache = SustainableCache.builder(server).namespace("p").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .maxClockSkew(SKEW).fleetLease(false).build();
    caches.add(cache);
    return cache;
  }

  @AfterEach
  void close() {
    caches.forEach(SustainableCache::close);
  }

  /** A read of the database that begins now, on the caches' clock and ticker. */
  private ReadStart begin() {
    return ReadStart.now(clock, clock.ticker());
  }

  /** The smallest step of the fake clock: a millisecond, on the ticker and the wall clock. */
  private void tick() {
    clock.advanceMillis(1);
  }

  private byte kind(String key) {
    return Envelope.kind(server.gets("p:" + key).join().orElseThrow().value());
  }

  @Test
  void aReadThatBeganAfterThisInstanceSawTheTombstone_isCached_wellWithinTheSkew() {
    writer.invalidate("k");
    tick();
    ReadStart first = begin();
    tick();
    assertThat(reader.putLoaded("k", "new", first)).as("saw the tombstone only now").isFalse();
    tick();
    ReadStart second = begin(); // began after the sighting: the tombstone predates its read
    tick();

    assertThat(reader.putLoaded("k", "new", second)).isTrue();
    assertThat(writer.getIfPresent("k")).contains("new");
    assertThat(clock.millis() - first.instant().toEpochMilli()).as("well within the skew")
        .isLessThan(SKEW.toMillis());
  }

  @Test
  void aReadThatBeganBeforeTheChange_isNotCached_evenAfterAnotherReadSawIt() {
    ReadStart stale = begin(); // reads "old"
    tick();
    writer.invalidate("k"); // "new" committed, then invalidated
    tick();
    assertThat(reader.putLoaded("k", "new", begin())).isFalse(); // sees the tombstone
    tick();

    assertThat(reader.putLoaded("k", "old", stale)).as("began before the sighting").isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
  }

  @Test
  void aReadThatBeganInTheTickOfTheSighting_butBeforeTheChange_isNotCached() {
    // everything in one reading of the ticker: a sighting is no proof for a start as old as it
    ReadStart stale = begin(); // reads "old"
    writer.invalidate("k");
    assertThat(reader.putLoaded("k", "new", begin())).isFalse(); // sees the tombstone

    assertThat(reader.putLoaded("k", "old", stale)).isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
  }

  @Test
  void aSecondChangeAfterTheSighting_keepsOutAReadThatBeganBeforeIt_inTheSameMillisecond() {
    writer.invalidate("k");
    tick();
    reader.putLoaded("k", "v1", begin()); // the first tombstone, seen
    tick();
    ReadStart afterFirst = begin(); // reads v1
    writer.invalidate("k"); // v2 committed: a tombstone stamped in the millisecond it began
    tick();

    assertThat(reader.putLoaded("k", "v1", afterFirst)).as("another item: not seen").isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_TOMBSTONE);
  }

  @Test
  void aSightingCountsOnlyOnTheInstanceThatSawIt_andOnlyForStartsOnItsTicker() {
    writer.invalidate("k");
    tick();
    reader.putLoaded("k", "v", begin());
    tick();
    ReadStart later = begin();
    tick();

    assertThat(writer.putLoaded("k", "v", later)).as("the writer never saw it").isFalse();
    assertThat(reader.putLoaded("k", "v", ReadStart.at(later.instant())))
        .as("no ticker reading: by time only").isFalse();
    assertThat(reader.putLoaded("k", "v", ReadStart.now(clock, () -> clock.ticker().read())))
        .as("another ticker").isFalse();
    assertThat(reader.putLoaded("k", "v", later)).isTrue();
  }

  @Test
  void anInvalidateAllAfterTheSighting_keepsOutAReadThatBeganBeforeIt() {
    // the region is emptied by a new generation of the namespace, which changes no item
    SustainableCache<String> region = SustainableCache.builder(server).namespace("g").ttl(TTL)
        .codec(ValueCodec.utf8()).clock(clock).ticker(clock.ticker()).scheduler(scheduler)
        .refreshExecutor(new ManualExecutor()).random(FixedRandom.neverEarly())
        .maxClockSkew(SKEW).fleetLease(false).invalidateAllBound(Duration.ofSeconds(1)).build();
    caches.add(region);
    scheduler.runDue(); // its first poll of the generation
    region.invalidate("k");
    tick();
    assertThat(region.putLoaded("k", "v1", begin())).isFalse(); // the tombstone, seen
    tick();
    ReadStart beforeTheBulkUpdate = begin(); // reads "old"
    tick();
    region.invalidateAll(); // a bulk update committed, then the region emptied

    assertThat(region.putLoaded("k", "old", beforeTheBulkUpdate)).isFalse(); // seen again
    assertThat(region.getIfPresent("k")).isEmpty();
    tick();
    assertThat(region.putLoaded("k", "new", begin())).as("began after it was seen again")
        .isTrue();
  }

  @Test
  void aFenceSeenBeforeTheReadBegan_stillKeepsItOut() {
    WriteFence<String> fence = writer.fence("k");
    tick();
    reader.putLoaded("k", "old", begin());
    tick();

    assertThat(reader.putLoaded("k", "old", begin())).isFalse();
    assertThat(kind("k")).isEqualTo(Envelope.KIND_FENCE);
    fence.rolledBack();
  }

  /**
   * Tries to break the invariant with random interleavings: writers commit new versions and
   * invalidate (NONSTRICT_READ_WRITE's way: once in the flush, before the commit, and once after
   * it), readers on three instances begin, read the database, stall, and put what they read; the
   * clock moves 0 to 2 ms a step, so changes and reads share milliseconds and everything happens
   * well within the skew. After every step, the store may hold no value older than the version
   * whose after-commit invalidation has landed. And the narrowing is exercised: reads cached
   * within the skew of the last change.
   */
  @Test
  void randomInterleavings_neverCacheARowReadBeforeACommitAfterItsInvalidation() {
    List<SustainableCache<String>> instances = List.of(reader, cache(), cache());
    SustainableCache<String> observer = cache();
    SplittableRandom random = new SplittableRandom(30);
    int version = 0; // the database's committed row
    int invalidated = 0; // the newest version whose after-commit invalidation landed
    long changedAt = clock.millis();
    int cachedWithinSkew = 0;
    boolean committing = false; // between the flush's invalidation and the commit
    record Read(SustainableCache<String> on, ReadStart start, int row) {}
    List<Read> reads = new ArrayList<>();
    for (int step = 0; step < 20_000; step++) {
      clock.advanceMillis(random.nextInt(0, 3));
      int action = random.nextInt(10);
      if (action == 0 && !committing) {
        writer.invalidate("k"); // in the flush: the row is still the old one
        committing = true;
      } else if (action == 1 && committing) {
        version++; // the commit
        committing = false;
        if (random.nextBoolean()) {
          clock.advanceMillis(random.nextInt(0, 3));
        }
        writer.invalidate("k"); // after the commit
        invalidated = version;
        changedAt = clock.millis();
      } else if (action < 6) {
        SustainableCache<String> on = instances.get(random.nextInt(instances.size()));
        ReadStart start = begin();
        reads.add(new Read(on, start, version)); // its statement reads the committed row now
      } else if (!reads.isEmpty()) {
        Read read = reads.remove(random.nextInt(reads.size())); // any of them: reads stall
        if (read.on().putLoaded("k", Integer.toString(read.row()), read.start())
            && read.start().instant().toEpochMilli() < changedAt + SKEW.toMillis()) {
          cachedWithinSkew++;
        }
      }
      Optional<String> cached = observer.getIfPresent("k");
      int row = cached.map(Integer::parseInt).orElse(Integer.MAX_VALUE);
      assertThat(row).as("step %d: cached v%s, v%d's invalidation landed", step,
          cached.orElse("-"), invalidated).isGreaterThanOrEqualTo(invalidated);
    }
    assertThat(invalidated).as("commits").isGreaterThan(100);
    assertThat(cachedWithinSkew).as("reads cached within the skew of a change (none before)")
        .isGreaterThan(20);
  }
}
