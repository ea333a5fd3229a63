package io.sustainablecache;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A wall clock that moves only when told to. Thread-safe. */
final class FakeClock implements InstantSource {

  private final AtomicLong millis;

  FakeClock(long startMillis) {
    this.millis = new AtomicLong(startMillis);
  }

  /** Starts at a round second in 2026, so tick arithmetic in tests is easy to follow. */
  static FakeClock atRoundSecond() {
    return new FakeClock(1_790_000_000_000L);
  }

  void advance(Duration duration) {
    millis.addAndGet(duration.toMillis());
  }

  void advanceMillis(long delta) {
    millis.addAndGet(delta);
  }

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }
}
