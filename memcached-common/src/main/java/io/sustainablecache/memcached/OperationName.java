package io.sustainablecache.memcached;

import static java.util.Objects.requireNonNull;

import io.sustainablecache.spi.StoreException;

/**
 * Names one operation of one store adapter in the messages of {@link StoreException}s, for
 * example {@code "ARCUS gets"}: every message an adapter built on {@link PendingOperation}
 * produces starts with it ({@code "ARCUS gets timed out after 700 ms"}, {@code "ARCUS set
 * failed: SERVER_ERROR object too large for cache"}).
 *
 * <p>For adapter authors. Adapters create one constant per operation; the name never contains
 * a key or a value. Immutable and thread-safe.
 */
public final class OperationName {

  private final String client;
  private final String operation;
  private final String text;

  private OperationName(String client, String operation) {
    this.client = client;
    this.operation = operation;
    this.text = client + " " + operation;
  }

  /**
   * Creates a name.
   *
   * @param client how messages name the client library, for example {@code "ARCUS"}; not blank
   * @param operation the SPI operation, for example {@code "gets"}; not blank
   * @return the name
   * @throws NullPointerException if an argument is {@code null}
   * @throws IllegalArgumentException if an argument is blank
   */
  public static OperationName of(String client, String operation) {
    requireNonNull(client, "client");
    requireNonNull(operation, "operation");
    if (client.isBlank() || operation.isBlank()) {
      throw new IllegalArgumentException("client and operation must not be blank, were \""
          + client + "\" and \"" + operation + "\"");
    }
    return new OperationName(client, operation);
  }

  /**
   * The client library's name.
   *
   * @return for example {@code "ARCUS"}
   */
  public String client() {
    return client;
  }

  /**
   * The operation's name.
   *
   * @return for example {@code "gets"}
   */
  public String operation() {
    return operation;
  }

  /**
   * The client and the operation, separated by a space.
   *
   * @return for example {@code "ARCUS gets"}
   */
  @Override
  public String toString() {
    return text;
  }
}
