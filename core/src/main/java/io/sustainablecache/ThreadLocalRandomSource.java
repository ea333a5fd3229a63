package io.sustainablecache;

import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * The default random source: a thread-safe view of {@link ThreadLocalRandom}. Injected like any
 * other generator, so the decision code never reaches for a global random source itself.
 */
enum ThreadLocalRandomSource implements RandomGenerator {
  INSTANCE;

  @Override
  public long nextLong() {
    return ThreadLocalRandom.current().nextLong();
  }

  @Override
  public double nextDouble() {
    return ThreadLocalRandom.current().nextDouble();
  }

  @Override
  public String toString() {
    return "ThreadLocalRandom";
  }
}
