package io.sustainablecache.spi;

/**
 * A {@link CacheStore} operation failed: the server is unreachable, did not answer within the
 * operation timeout, or refused the request. The cache treats it as a miss (reads) or a skipped
 * write, counts it in {@link io.sustainablecache.CacheStats#storeErrorCount()} and never lets it
 * reach a caller of {@link io.sustainablecache.SustainableCache#get}.
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
