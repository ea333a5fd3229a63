package io.sustainablecache.example;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tiny load driver using only the JDK, runnable as a single source file: {@code java
 * examples/spring-boot-h2/src/main/java/io/sustainablecache/example/LoadDriver.java
 * [baseUrl] [requestsPerSecond] [seconds] [products]}. Sends {@code GET /products/{id}} at a
 * steady rate (open loop, to loopback by default) and prints, each second, the requests sent,
 * their slowest latency and the database queries the service ran in that second (from {@code GET
 * /stats}). Stops by itself.
 */
public final class LoadDriver {

  private static final Pattern DB_QUERIES = Pattern.compile("\"dbQueries\"\\s*:\\s*(\\d+)");

  private LoadDriver() {}

  /**
   * Runs the load.
   *
   * @param args base URL (default {@code http://localhost:8080}), requests per second (default
   *     100, at most 2000), seconds (default 60, at most 3600), number of product ids (default 5)
   * @throws Exception if the service cannot be reached
   */
  public static void main(String[] args) throws Exception {
    String base = args.length > 0 ? args[0] : "http://localhost:8080";
    int rate = Math.min(args.length > 1 ? Integer.parseInt(args[1]) : 100, 2000);
    int seconds = Math.min(args.length > 2 ? Integer.parseInt(args[2]) : 60, 3600);
    int products = Math.max(1, args.length > 3 ? Integer.parseInt(args[3]) : 5);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    ExecutorService pool = Executors.newFixedThreadPool(32);
    AtomicLong sent = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicLong slowestMicros = new AtomicLong();
    long lastQueries = dbQueries(http, base);
    System.out.printf("%s: %d req/s for %d s over %d products%n", base, rate, seconds, products);
    System.out.println("second  requests  errors  slowest_ms  db_queries");
    long start = System.nanoTime();
    long intervalNanos = 1_000_000_000L / rate;
    for (int second = 1; second <= seconds; second++) {
      long secondEnd = start + second * 1_000_000_000L;
      for (long next = secondEnd - 1_000_000_000L; next < secondEnd; next += intervalNanos) {
        long wait = next - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        long id = 1 + sent.getAndIncrement() % products;
        pool.execute(() -> {
          long t0 = System.nanoTime();
          try {
            HttpResponse<Void> r = http.send(HttpRequest.newBuilder(
                URI.create(base + "/products/" + id)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.discarding());
            if (r.statusCode() != 200) {
              errors.incrementAndGet();
            }
          } catch (Exception e) {
            errors.incrementAndGet();
          }
          slowestMicros.accumulateAndGet((System.nanoTime() - t0) / 1000, Math::max);
        });
      }
      long queries = dbQueries(http, base);
      System.out.printf("%6d  %8d  %6d  %10.1f  %10d%n", second, rate, errors.getAndSet(0),
          slowestMicros.getAndSet(0) / 1000.0, queries - lastQueries);
      lastQueries = queries;
    }
    pool.shutdown();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }

  private static long dbQueries(HttpClient http, String base) throws Exception {
    String body = http.send(HttpRequest.newBuilder(URI.create(base + "/stats"))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = DB_QUERIES.matcher(body);
    if (!m.find()) {
      throw new IllegalStateException("unexpected /stats answer: " + body);
    }
    return Long.parseLong(m.group(1));
  }
}
