package io.sustainablecache.spi;

/**
 * A {@link CacheStore} operation failed: the server is unreachable, did not answer within the
 * operation timeout, or refused the request. Counted in {@link
 * io.sustainablecache.CacheStats#storeErrorCount()}. A read treats it as a miss and a refresh's
 * or a load's write is skipped, so it never reaches a caller of the reads ({@code get}, {@code
 * find}, {@code getAll} and their asynchronous forms); the writes whose Javadoc names it ({@code
 * put}, {@code putIfAbsent}, {@code invalidate}, {@code invalidateAll}, a fence's steps) throw it,
 * or complete with it, when the store refuses them.
 */
public class StoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, without the item's value
   * @param cause the client's exception, may be {@code null}
   */
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Creates an exception without a cause.
   *
   * @param message what failed, without the item's value
   */
  public StoreException(String message) {
    super(message);
  }
}
