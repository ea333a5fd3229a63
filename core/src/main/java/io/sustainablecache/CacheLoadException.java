package io.sustainablecache;

/**
 * Thrown by {@link SustainableCache#get} when the value had to be loaded (a cold miss, or an
 * expired entry under a policy that does not serve stale values) and the {@link Loader} failed or
 * returned {@code null}. The loader's exception is the {@linkplain #getCause() cause}. Callers
 * sharing one in-flight load all receive their own instance with the same cause.
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
   * @param cause the loader's exception, or {@code null} when the loader returned {@code null}
   */
  public CacheLoadException(String message, Throwable cause) {
    super(message, cause);
  }
}
