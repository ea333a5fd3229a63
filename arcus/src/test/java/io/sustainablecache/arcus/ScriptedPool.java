package io.sustainablecache.arcus;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.CachedData;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StatusCode;
import net.spy.memcached.transcoders.Transcoder;

/**
 * An {@link ArcusClientPool} without clients whose key-value calls answer from a script: a value,
 * a server status, a failure while waiting, or a refusal to submit. It records what the store
 * encoded and how it waited, so the unit tests check the store's mapping without a network.
 * Thread-safe enough for single-threaded tests (fields are volatile).
 */
final class ScriptedPool extends ArcusClientPool {

  /** The item a scripted {@code gets} finds, before the store's transcoder decodes it. */
  record Hit(int flags, byte[] data, long cas) {}

  /**
   * The next call's outcome.
   *
   * @param value what the future returns: a {@link Hit} or {@code null} for {@code gets}, a
   *     {@link Boolean} or {@link CASResponse} otherwise
   * @param status the server's status line the future reports
   * @param failure thrown by {@code Future.get}: a checked exception of {@code get} or a runtime
   *     exception
   * @param refusal thrown by the submitting call itself
   */
  record Answer(Object value, OperationStatus status, Exception failure, RuntimeException refusal) {

    static Answer of(Object value, String statusLine) {
      boolean success = "STORED".equals(statusLine) || "DELETED".equals(statusLine)
          || "END".equals(statusLine);
      StatusCode code = statusLine.startsWith("SERVER_ERROR")
          ? StatusCode.ERR_SERVER
          : StatusCode.fromAsciiLine(statusLine);
      return new Answer(value, new OperationStatus(success, statusLine, code), null, null);
    }

    static Answer failing(Exception failure) {
      return new Answer(null, null, requireNonNull(failure), null);
    }

    static Answer refusing(RuntimeException refusal) {
      return new Answer(null, null, null, requireNonNull(refusal));
    }
  }

  /** A completed future playing an {@link Answer}. */
  static final class ScriptedFuture<T> extends OperationFuture<T> {
    private final T value;
    private final Answer answer;
    volatile long waitedMillis = -1;
    volatile boolean cancelled;

    ScriptedFuture(T value, Answer answer) {
      super(new CountDownLatch(0), 0);
      this.value = value;
      this.answer = answer;
    }

    @Override
    public T get(long duration, TimeUnit unit)
        throws InterruptedException, TimeoutException, ExecutionException {
      waitedMillis = unit.toMillis(duration);
      Exception failure = answer.failure();
      if (failure instanceof InterruptedException e) {
        throw e;
      } else if (failure instanceof TimeoutException e) {
        throw e;
      } else if (failure instanceof ExecutionException e) {
        throw e;
      } else if (failure instanceof RuntimeException e) {
        throw e;
      } else if (failure != null) {
        throw new AssertionError("get cannot throw " + failure);
      }
      return value;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      cancelled = true;
      return true;
    }

    @Override
    public OperationStatus getStatus() {
      return answer.status();
    }
  }

  private volatile Answer next = Answer.of(null, "END");
  private volatile ScriptedFuture<?> last;
  final List<CachedData> encoded = new CopyOnWriteArrayList<>();
  final List<String> calls = new CopyOnWriteArrayList<>();

  ScriptedPool() {
    super(1, new ArcusClient[0]);
  }

  /** Scripts the outcome of every following call. */
  ScriptedPool answer(Answer answer) {
    this.next = requireNonNull(answer, "answer");
    return this;
  }

  /** The future handed out by the latest call. */
  ScriptedFuture<?> lastFuture() {
    return last;
  }

  @Override
  public <T> OperationFuture<CASValue<T>> asyncGets(String key, Transcoder<T> tc) {
    Answer answer = submit("gets " + key);
    CASValue<T> value = null;
    if (answer.value() instanceof Hit hit) {
      value = new CASValue<>(hit.cas(), tc.decode(new CachedData(hit.flags(), hit.data(),
          tc.getMaxSize())));
    }
    return remember(new ScriptedFuture<>(value, answer));
  }

  @Override
  public <T> OperationFuture<Boolean> add(String key, int exp, T o, Transcoder<T> tc) {
    return store("add " + key + " " + exp, o, tc);
  }

  @Override
  public <T> OperationFuture<Boolean> set(String key, int exp, T o, Transcoder<T> tc) {
    return store("set " + key + " " + exp, o, tc);
  }

  @Override
  public <T> OperationFuture<CASResponse> asyncCAS(String key, long casId, int exp, T value,
      Transcoder<T> tc) {
    Answer answer = submit("cas " + key + " " + casId + " " + exp);
    encoded.add(tc.encode(value));
    return remember(new ScriptedFuture<>((CASResponse) answer.value(), answer));
  }

  @Override
  public OperationFuture<Boolean> delete(String key) {
    Answer answer = submit("delete " + key);
    return remember(new ScriptedFuture<>((Boolean) answer.value(), answer));
  }

  private <T> OperationFuture<Boolean> store(String call, T value, Transcoder<T> tc) {
    Answer answer = submit(call);
    encoded.add(tc.encode(value));
    return remember(new ScriptedFuture<>((Boolean) answer.value(), answer));
  }

  private Answer submit(String call) {
    calls.add(call);
    Answer answer = next;
    if (answer.refusal() != null) {
      throw answer.refusal();
    }
    return answer;
  }

  private <T> ScriptedFuture<T> remember(ScriptedFuture<T> future) {
    last = future;
    return future;
  }
}
