package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.sustainablecache.internal.CacheConfig;
import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The settings value: building, parsing, merging and applying it. */
class CacheSettingsTest {

  private static final String EVERY_SETTING = "ttl=PT10M, grace=PT1M,"
      + " refresh-policy=sustainable:1.5:0.2, fleet-lease=false, no-value-ttl=PT30S,"
      + " load-timeout=PT5S, refresh-threads=8, refresh-queue-capacity=500,"
      + " failure-backoff=PT0.5S:PT20S, serve-stale-on-error=false, max-clock-skew=PT2S,"
      + " ttl-jitter=0.1, max-value-size=65536, coalesce=20:PT0.002S,"
      + " close-timeout=PT3S,"
      + " fence-timeout=PT45S, near-cache=10000:PT1S, near-cache-copy=true,"
      + " invalidate-all-bound=PT2S";

  @Test
  void everySettingParsesAndPrintsBackTheSame() {
    CacheSettings settings = CacheSettings.parse(EVERY_SETTING);

    assertThat(settings.toString()).isEqualTo(EVERY_SETTING);
    assertThat(CacheSettings.parse(settings.toString())).isEqualTo(settings);
    assertThat(settings.ttl()).hasValue(Duration.ofMinutes(10));
    assertThat(settings.get(CacheSettings.REFRESH_POLICY))
        .hasValue(RefreshPolicy.sustainable(1.5, 0.2));
    assertThat(settings.get(CacheSettings.FLEET_LEASE)).hasValue(false);
    assertThat(settings.get(CacheSettings.FAILURE_BACKOFF)).hasValue(
        new SettingText.FailureBackoff(Duration.ofMillis(500), Duration.ofSeconds(20)));
    assertThat(settings.get(CacheSettings.COALESCE))
        .hasValue(new SettingText.Coalesce(20, Duration.ofMillis(2)));
    assertThat(settings.get(CacheSettings.TTL_JITTER)).hasValue(0.1);
    assertThat(settings.get(CacheSettings.NEAR_CACHE))
        .hasValue(new SettingText.NearCache(10_000, false, Duration.ofSeconds(1), null));
    assertThat(settings.hasNearCache()).isTrue();
    assertThat(settings.get(CacheSettings.NEAR_CACHE_COPY)).hasValue(true);
    assertThat(settings.maxClockSkew()).hasValue(Duration.ofSeconds(2));
    assertThat(settings.get(CacheSettings.INVALIDATE_ALL_BOUND)).hasValue(Duration.ofSeconds(2));
    CacheSettings sampled = CacheSettings.parse("near-cache=10:1s:0.5");
    assertThat(sampled.get(CacheSettings.NEAR_CACHE).orElseThrow().sampling()).isEqualTo(0.5);
    assertThat(CacheSettings.parse(sampled.toString())).isEqualTo(sampled);
  }

  @Test
  void aNearCacheSizeWithAUnit_isInStoredBytes_andWrittenBackWithTheLargestExactUnit() {
    CacheSettings bytes = CacheSettings.parse("near-cache=64MiB:1s");
    assertThat(bytes.get(CacheSettings.NEAR_CACHE).orElseThrow())
        .isEqualTo(new SettingText.NearCache(64L << 20, true, Duration.ofSeconds(1), null));
    assertThat(bytes.toString()).contains("near-cache=64MiB:PT1S");
    assertThat(CacheSettings.parse(bytes.toString())).isEqualTo(bytes);
    assertThat(CacheSettings.parse("near-cache=2 GB:1s:0.5").get(CacheSettings.NEAR_CACHE))
        .hasValue(new SettingText.NearCache(2L << 30, true, Duration.ofSeconds(1), 0.5));
    assertThat(CacheSettings.parse("near-cache=1536kib:1s").toString())
        .contains("near-cache=1536KiB");
    assertThat(CacheSettings.parse("near-cache=5000B:1s").get(CacheSettings.NEAR_CACHE)
        .orElseThrow().maximumSize()).isEqualTo(5_000L);
    assertThat(CacheSettings.parse("near-cache=5000B:1s").toString()).contains("5000B");
    assertThat(CacheSettings.empty().adding(CacheSettings.NEAR_CACHE,
        new SettingText.NearCache(1L << 20, true, Duration.ofSeconds(1), null)))
        .isEqualTo(CacheSettings.parse("near-cache=1MiB:1s"));
  }

  /** What the builder's setters add (through the rows) equals what the spec states. */
  @Test
  void theBuildersRowsAndTheSpecMakeEqualValues() {
    CacheSettings built = CacheSettings.empty()
        .adding(CacheSettings.TTL, Duration.ofMinutes(10))
        .adding(CacheSettings.REFRESH_POLICY, RefreshPolicy.xfetch(2))
        .adding(CacheSettings.FAILURE_BACKOFF,
            new SettingText.FailureBackoff(Duration.ofSeconds(1), null));

    assertThat(built).isEqualTo(CacheSettings.parse("ttl=10m, refresh-policy=xfetch:2,"
        + " failure-backoff=1s"));
    assertThat(built.hashCode()).isEqualTo(CacheSettings.parse("ttl=10m,"
        + " refresh-policy=xfetch:2, failure-backoff=1s").hashCode());
    assertThat(built.get(CacheSettings.FAILURE_BACKOFF).orElseThrow().max()).isNull();
    assertThat(built.get(CacheSettings.GRACE)).isEmpty();
    assertThat(built).isNotEqualTo(CacheSettings.parse("ttl=10m, refresh-policy=xfetch:2"));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "500ms | PT0.5S", "30s | PT30S", "10m | PT10M", "2h | PT2H", "1d | PT24H",
      "PT10M | PT10M", "pt1m30s | PT1M30S"})
  void durationsTakeAUnitOrIso8601(String text, String expected) {
    assertThat(CacheSettings.parse("ttl=" + text).ttl()).hasValue(Duration.parse(expected));
  }

  /**
   * The docs turn a setting off with {@code =0} ({@code invalidate-all-bound=0}): zero needs no
   * unit, any other number does.
   */
  @Test
  void zeroNeedsNoUnit_otherNumbersDo() {
    assertThat(CacheSettings.parse("invalidate-all-bound=0")
        .get(CacheSettings.INVALIDATE_ALL_BOUND)).hasValue(Duration.ZERO);
    assertThatIllegalArgumentException().isThrownBy(() -> CacheSettings.parse("grace=5"))
        .withMessageContaining("a duration is a number with a unit");
  }

  @Test
  void policies() {
    assertThat(CacheSettings.parse("refresh-policy=none").get(CacheSettings.REFRESH_POLICY))
        .hasValue(RefreshPolicy.none());
    assertThat(CacheSettings.parse("refresh-policy=sustainable")
        .get(CacheSettings.REFRESH_POLICY))
        .hasValue(RefreshPolicy.sustainable());
    assertThat(CacheSettings.parse("refresh-policy = SUS").get(CacheSettings.REFRESH_POLICY))
        .hasValue(RefreshPolicy.sustainable());
    assertThat(CacheSettings.parse("refresh-policy=per:1.0").get(CacheSettings.REFRESH_POLICY))
        .hasValue(RefreshPolicy.xfetch(1.0));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  ", "ttl=1m", "ttl=1m, grace=0s", " ttl = 1m ,grace=0s "})
  void wellFormedSpecsParse(String spec) {
    CacheSettings settings = CacheSettings.parse(spec);
    assertThat(CacheSettings.parse(settings.toString())).isEqualTo(settings);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
      "ttl                   | has no value",
      "tll=1m                | unknown key 'tll'",
      "ttl=1m, ttl=2m        | 'ttl' is given twice",
      "ttl=1m,,grace=1s      | empty pair",
      "ttl=ten minutes       | ttl=ten minutes: a duration is a number",
      "ttl=10y               | unknown duration unit 'y'",
      "ttl=0s                | ttl=0s: ttl must be between 1 ms and 365 d",
      "fleet-lease=yes       | expected true or false",
      "refresh-threads=many  | not a number: many",
      "refresh-threads=0     | refreshThreads",
      "refresh-policy=lru    | expected sustainable",
      "refresh-policy=xfetch | expected xfetch:<beta>",
      "refresh-batch=50:10ms | unknown key 'refresh-batch'",
      "near-cache=10000      | expected <maximumSize>:<staleness>[:<sampling>]",
      "near-cache=10:1s:2    | nearCache sampling must be in [0, 1]",
      "near-cache=0:1s       | nearCache maximumSize must be in [1, 100000000]",
      "near-cache=100B:1s    | nearCacheBytes maximumBytes must be in [1 KiB, 1 TiB]",
      "near-cache=1.5MiB:1s  | not a number: 1.5",
      "ttl-jitter=0.9        | ttlJitter must be in [0, 0.5]"})
  void malformedSpecsNameThePairAtFault(String spec, String message) {
    assertThatIllegalArgumentException().isThrownBy(() -> CacheSettings.parse(spec))
        .withMessageContaining(message);
  }

  /**
   * Issue 24: a duration too long for {@link Duration} (or for the nanoseconds the cache measures
   * in) is an {@link IllegalArgumentException} naming the pair, in every setting that takes one;
   * it was an {@code ArithmeticException}.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ttl=%s", "grace=%s", "no-value-ttl=%s", "load-timeout=%s",
      "max-clock-skew=%s", "close-timeout=%s", "failure-backoff=%s", "failure-backoff=1s:%s",
      "coalesce=100:%s", "near-cache=1000:%s", "near-cache=1000:%s:0.5"})
  void aDurationTooLongForADuration_isAnIllegalArgument_namingThePair(String form) {
    for (String huge : new String[] {"9999999999999999d", "9223372036854775807h",
        "9223372036854775807m", "PT9999999999999999999H"}) {
      String pair = form.formatted(huge);
      assertThatIllegalArgumentException().as(pair).isThrownBy(() -> CacheSettings.parse(pair))
          .withMessageStartingWith(pair + ":");
    }
  }

  /** A {@link Duration} too long for nanoseconds set in code: the setting's own message. */
  @Test
  void aDurationTooLongForNanoseconds_setInCode_isAnIllegalArgument_namingTheSetting() {
    Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(InMemoryStore.create());
    assertThatIllegalArgumentException().isThrownBy(() -> builder.ttl(huge))
        .withMessageContaining("ttl must be").withMessageContaining(huge.toString());
    assertThatIllegalArgumentException()
        .isThrownBy(() -> builder.loadTimeout(huge))
        .withMessageContaining("loadTimeout must be");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> builder.nearCache(10, huge))
        .withMessageContaining("nearCache staleness must be");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> io.sustainablecache.spi.CacheStoreFactory.Settings.builder()
            .operationTimeout(huge))
        .withMessageContaining("operationTimeout must be").withMessageContaining(huge.toString());
  }

  @Test
  void pairsAsSpringBootBindsThem_matchKeysIgnoringCaseDashesAndUnderscores() {
    java.util.Map<String, String> pairs = new java.util.LinkedHashMap<>();
    pairs.put("ttl", "10m");
    pairs.put("refreshPolicy", " xfetch:2 ");
    pairs.put("FLEET_LEASE", "false");

    assertThat(CacheSettings.from(pairs))
        .isEqualTo(CacheSettings.parse("ttl=10m, refresh-policy=xfetch:2, fleet-lease=false"));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheSettings.from(java.util.Map.of("refresh-policy", "none",
            "refreshPolicy", "none")))
        .withMessageContaining("given twice");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheSettings.from(java.util.Map.of("size", "10")))
        .withMessageContaining("unknown key 'size'").withMessageContaining("refresh-policy");
  }

  /** The spec and the cache builder check a value with one rule: its row's, one message. */
  @Test
  void valuesAreCheckedWhenRead_withTheCacheBuildersRules() {
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(InMemoryStore.create());
    assertThatIllegalArgumentException().isThrownBy(() -> CacheSettings.parse("ttl=0s"))
        .withMessage("ttl=0s: " + messageOf(() -> builder.ttl(Duration.ZERO)))
        .withMessageContaining("ttl must be between 1 ms and 365 d: PT0S");
    assertThatIllegalArgumentException().isThrownBy(() -> CacheSettings.parse("max-value-size=3"))
        .withMessage("max-value-size=3: " + messageOf(() -> builder.maxValueSize(3)))
        .withMessageContaining("maxValueSize");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheSettings.parse("fence-timeout=500ms"))
        .withMessage("fence-timeout=500ms: "
            + messageOf(() -> builder.fenceTimeout(Duration.ofMillis(500))))
        .withMessageContaining("fenceTimeout must be between 1 s and 1 d");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> CacheSettings.parse("failure-backoff=10s:1s"))
        .withMessage("failure-backoff=10s:1s: " + messageOf(
            () -> builder.failureBackoff(Duration.ofSeconds(10), Duration.ofSeconds(1))));
    assertThatNullPointerException().isThrownBy(() -> builder.grace(null));
    assertThatNullPointerException().isThrownBy(() -> CacheSettings.parse(null));
  }

  private static String messageOf(Runnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    throw new AssertionError("no IllegalArgumentException");
  }

  @Test
  void withDefaults_takesEachAbsentSettingFromTheDefaults() {
    CacheSettings defaults = CacheSettings.parse("ttl=10m, grace=1m, fleet-lease=false");
    CacheSettings cache = CacheSettings.parse("ttl=2m, refresh-threads=4");

    CacheSettings merged = cache.withDefaults(defaults);

    assertThat(merged).isEqualTo(
        CacheSettings.parse("ttl=2m, grace=1m, fleet-lease=false, refresh-threads=4"));
    assertThat(cache.withDefaults(CacheSettings.empty())).isEqualTo(cache);
    assertThat(CacheSettings.empty().withDefaults(defaults)).isEqualTo(defaults);
    assertThat(CacheSettings.empty().isEmpty()).isTrue();
    assertThat(merged.isEmpty()).isFalse();
  }

  @Test
  void without_leavesTheKeyAbsent_andTheOtherSettingsAsTheyWere() {
    CacheSettings settings = CacheSettings.parse(
        "ttl=2m, near-cache=100:1s, near-cache-copy=true, fleet-lease=false");

    CacheSettings far = settings.without("near-cache").without("nearCacheCopy");

    assertThat(far).isEqualTo(CacheSettings.parse("ttl=2m, fleet-lease=false"));
    assertThat(far.hasNearCache()).isFalse();
    assertThat(settings.hasNearCache()).isTrue(); // immutable: the original keeps it
    assertThat(far.without("near-cache")).isSameAs(far);
    assertThat(CacheSettings.parse("ttl=1m").without("ttl").isEmpty()).isTrue();
    assertThatIllegalArgumentException().isThrownBy(() -> settings.without("near-cahce"))
        .withMessageContaining("unknown key 'near-cahce'");
    assertThatNullPointerException().isThrownBy(() -> settings.without(null));
  }

  @Test
  void theCacheBuilderAppliesWhatIsSet_andKeepsItsDefaultsForTheRest() {
    CacheSettings settings = CacheSettings.parse("ttl=2m, grace=10s, fleet-lease=false,"
        + " refresh-policy=xfetch:1.0, failure-backoff=1s:5s, coalesce=10:1ms");

    CacheConfig<?> config = SustainableCache.builder(InMemoryStore.create())
        .namespace("n").settings(settings).config(ValueCodec.utf8());

    assertThat(config.ttl()).isEqualTo(Duration.ofMinutes(2));
    assertThat(config.grace()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.fleetLease()).isFalse();
    assertThat(config.policy()).isEqualTo(RefreshPolicy.xfetch(1.0));
    assertThat(config.failureBackoff()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.maxFailureBackoff()).isEqualTo(Duration.ofSeconds(5));
    assertThat(config.coalesceMaxBatchSize()).isEqualTo(10);
    assertThat(config.coalesceMaxWait()).isEqualTo(Duration.ofMillis(1));
    CacheConfig<?> defaults = SustainableCache.builder(InMemoryStore.create())
        .namespace("n").ttl(Duration.ofMinutes(2)).config(ValueCodec.utf8());
    assertThat(config.noValueTtl()).isEqualTo(defaults.noValueTtl());
    assertThat(config.loadTimeout()).isEqualTo(defaults.loadTimeout());
    assertThat(config.serveStaleOnError()).isEqualTo(defaults.serveStaleOnError());
  }

  @Test
  void aSettingAlsoSetOnTheCacheBuilder_isAnError() {
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(InMemoryStore.create())
        .ttl(Duration.ofMinutes(1));
    assertThatIllegalStateException()
        .isThrownBy(() -> builder.settings(CacheSettings.parse("ttl=2m")))
        .withMessageContaining("ttl");
  }

  @Test
  void invalidateAllBound_isParsed() {
    assertThat(CacheSettings.parse("invalidate-all-bound=2s").get(CacheSettings.INVALIDATE_ALL_BOUND))
        .contains(Duration.ofSeconds(2));
  }
}
