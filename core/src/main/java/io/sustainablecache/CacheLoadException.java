package io.sustainablecache;

/**
 * Thrown by {@link SustainableCache#get} and {@link SustainableCache#getAll} (their asynchronous
 * forms complete with it, {@code find} too except for "no value") when a key that had to be
 * loaded (a cold miss, or an expired entry under a policy that does not serve stale values) has
 * no value to return:
 * <ul>
 *   <li>its loader threw or failed: the loader's exception is the {@linkplain #getCause()
 *       cause} (an {@link Error} is rethrown as it is, not wrapped), also while the key backs
 *       off after that failure ({@link SustainableCacheBuilder#failureBackoff});</li>
 *   <li>another instance's load of the key failed and that instance holds the fleet lease while
 *       the key backs off: the cause is a {@code CacheLoadException} saying so;</li>
 *   <li>its loader found no value ({@code get} only): no cause;</li>
 *   <li>the load did not complete within {@link SustainableCacheBuilder#loadTimeout}, the cache
 *       could not read a settled entry of the key, or the read would have had to wait on a
 *       thread that must not block (a store client's I/O thread): no cause, the message says
 *       which;</li>
 *   <li>the waiting thread was interrupted: the {@link InterruptedException} is the cause, and
 *       the thread's interrupt flag is set again.</li>
 * </ul>
 * Callers sharing one in-flight load each receive their own instance with the same cause.
 *
 * <p>Background refresh failures never produce this exception; they are logged and counted in
 * {@link CacheStats#refreshFailureCount()}.
 */
public class CacheLoadException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed; never contains the value
   * @param cause the loader's exception, or {@code null} (see the class description)
   */
  public CacheLoadException(String message, Throwable cause) {
    super(message, cause);
  }
}
