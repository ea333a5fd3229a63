package io.sustainablecache;

/** {@link Ticker#systemTicker()}: {@link System#nanoTime()}. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long read() {
    return System.nanoTime();
  }

  @Override
  public String toString() {
    return "Ticker.systemTicker()";
  }
}
