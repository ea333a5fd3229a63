package io.sustainablecache.memcached;

import static org.assertj.core.api.Assertions.assertThat;

import io.sustainablecache.spi.StoreException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StoreFailuresTest {

  private static final OperationName GETS = OperationName.of("ARCUS", "gets");

  @AfterEach
  void clearInterruptFlag() {
    Thread.interrupted();
  }

  @Test
  void aTimeoutNamesTheOperationAndTheTimeout() {
    assertThat(StoreFailures.timedOut(GETS, Duration.ofMillis(700)))
        .hasMessage("ARCUS gets timed out after 700 ms").hasNoCause();
  }

  @Test
  void anAdapterDescribedFailureKeepsItsCause() {
    RuntimeException cause = new RuntimeException("x");
    assertThat(StoreFailures.failed(GETS, "the key is empty", cause))
        .hasMessage("ARCUS gets failed: the key is empty").hasCause(cause);
  }

  @Test
  void wrappersAreUnwrapped() {
    IllegalStateException root = new IllegalStateException("Shutting down");
    assertThat(StoreFailures.of(GETS, new CompletionException(new ExecutionException(root))))
        .hasMessage("ARCUS gets failed: the client is shut down").hasCause(root);
  }

  @Test
  void aStoreExceptionIsPassedThrough() {
    StoreException original = new StoreException("already mapped");
    assertThat(StoreFailures.of(GETS, new CompletionException(original))).isSameAs(original);
  }

  @Test
  void anInterruptKeepsTheThreadsFlag() {
    InterruptedException interrupt = new InterruptedException();
    assertThat(StoreFailures.of(GETS, interrupt)).hasMessage("ARCUS gets was interrupted")
        .hasCause(interrupt);
    assertThat(Thread.currentThread().isInterrupted()).isTrue();
  }

  @Test
  void aClientTimeoutSaysSo() {
    assertThat(StoreFailures.of(GETS, new TimeoutException("Timed out waiting for operation")))
        .hasMessage("ARCUS gets timed out: Timed out waiting for operation");
  }

  /** Clients put the rejected key in these messages: they stay in the cause only. */
  @Test
  void theMessageOfARefusedArgumentIsLeftOut() {
    IllegalArgumentException refused =
        new IllegalArgumentException("Key contains invalid characters:  ``user 42''");
    assertThat(StoreFailures.of(GETS, refused))
        .hasMessage("ARCUS gets failed: the client refused the key or an argument"
            + " (java.lang.IllegalArgumentException)")
        .hasCause(refused);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "Shutting down|the client is shut down",
      "Timed out waiting to add Cmd: gets Keys: user-42(max wait=0ms)|the client's operation"
          + " queue is full",
      "Interrupted while waiting to add Cmd: gets Keys: user-42|the calling thread was"
          + " interrupted while the client enqueued the operation",
      "something else|something else"})
  void theClientsIllegalStatesAreDescribedWithoutTheirOperation(String message, String reason) {
    assertThat(StoreFailures.of(GETS, new IllegalStateException(message)))
        .hasMessage("ARCUS gets failed: " + reason);
  }

  @Test
  void cancellationsAndMessagelessExceptionsAreDescribed() {
    assertThat(StoreFailures.of(GETS, new CancellationException()))
        .hasMessage("ARCUS gets failed: cancelled");
    assertThat(StoreFailures.of(GETS, new CancellationException("inactive node")))
        .hasMessage("ARCUS gets failed: cancelled: inactive node");
    assertThat(StoreFailures.of(GETS, new ArrayIndexOutOfBoundsException()))
        .hasMessage("ARCUS gets failed: java.lang.ArrayIndexOutOfBoundsException");
  }

  @Test
  void operationNamesAreValidated() {
    assertThat(GETS).hasToString("ARCUS gets");
    assertThat(GETS.client()).isEqualTo("ARCUS");
    assertThat(GETS.operation()).isEqualTo("gets");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> OperationName.of(" ", "gets"));
    org.assertj.core.api.Assertions.assertThatNullPointerException()
        .isThrownBy(() -> OperationName.of("ARCUS", null));
  }
}
