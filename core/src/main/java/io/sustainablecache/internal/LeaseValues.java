package io.sustainablecache.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.IntToLongFunction;

/**
 * The values of fleet-lease keys: what a holder writes ({@code L:<until>:<owner>}), the failure
 * marker a holder whose load failed writes ({@code F:<failures>:<not before>:<item cas>:<owner>}),
 * and how a reader judges a value it finds, which anyone who can write to the server may have
 * planted. Every value carries its own end, so a value that outlives it (planted with no exptime,
 * say) stops counting after at most that end plus the allowed clock skew, and a value that claims
 * longer than any lease lasts, or a marker that claims a longer back-off than its failure count
 * gives, is invalid at once. Immutable and thread-safe.
 */
final class LeaseValues {

  /** How a failure marker starts: {@code F:<failures>:<not before, epoch ms>:<cas>:<owner>}. */
  private static final String FAILED = "F:";

  /** How a holder's value starts: {@code L:<until, epoch ms>:<owner>}. */
  private static final String HELD = "L:";

  /** An owner identity is at most this long (a pid, a dash and 16 hex digits in this version). */
  private static final int MAX_OWNER_LENGTH = 64;

  /** A marker's failure count is read as at most this (the back-off is capped long before). */
  private static final long MAX_MARKED_FAILURES = 64;

  private final byte[] owner;
  private final long skewMillis;
  private final long maxHeldMillis;
  private final IntToLongFunction maxMarkedMillis;

  /**
   * @param owner this instance's identity
   * @param skewMillis the allowed clock skew
   * @param maxHeldMillis the furthest ahead a holder's end can lie
   * @param maxMarkedMillis the furthest ahead the end of a marker of a given failure count can
   *     lie
   */
  LeaseValues(byte[] owner, long skewMillis, long maxHeldMillis,
      IntToLongFunction maxMarkedMillis) {
    this.owner = owner;
    this.skewMillis = skewMillis;
    this.maxHeldMillis = maxHeldMillis;
    this.maxMarkedMillis = maxMarkedMillis;
  }

  /** Whether a marker is this instance's own. */
  boolean mine(FailureMarker marker) {
    return marker.owner(owner);
  }

  /** This instance's value for a lease it holds until {@code until} (epoch ms). */
  byte[] holder(long until) {
    byte[] head = (HELD + until + ":").getBytes(StandardCharsets.US_ASCII);
    byte[] value = Arrays.copyOf(head, head.length + owner.length);
    System.arraycopy(owner, 0, value, head.length, owner.length);
    return value;
  }

  /** This instance's failure marker for a failed load of the item version {@code itemCasToken}. */
  byte[] failureMarker(KeyRegistry.Failure failure, long itemCasToken) {
    byte[] head = (FAILED + failure.count() + ":" + failure.notBeforeEpoch() + ":" + itemCasToken
        + ":").getBytes(StandardCharsets.US_ASCII);
    byte[] marker = Arrays.copyOf(head, head.length + owner.length);
    System.arraycopy(owner, 0, marker, head.length, owner.length);
    return marker;
  }

  /**
   * A lease key's value as a reader judges it at {@code now}: the one place where bytes read from
   * a lease key are interpreted. Every lease value carries its own end, so a value that outlives
   * it (planted with no exptime, say) stops counting after at most that end plus the allowed
   * clock skew.
   */
  Lease judge(byte[] value, long now) {
    if (value != null && value.length > HELD.length() && value[0] == 'L' && value[1] == ':') {
      int colon = indexOf(value, (byte) ':', 2);
      long until = colon < 0 ? -1 : parseDigits(value, 2, colon);
      int ownerLength = value.length - colon - 1;
      if (until < 0 || ownerLength < 1 || ownerLength > MAX_OWNER_LENGTH
          || until > now + maxHeldMillis) {
        return Lease.INVALID;
      }
      return until + skewMillis < now ? Lease.LAPSED : Lease.HELD_BY_ANOTHER;
    }
    FailureMarker marker = FailureMarker.parse(value);
    if (marker == null
        || marker.notBefore() > now + maxMarkedMillis.applyAsLong(marker.failures())
        || marker.ownerBytes().length < 1 || marker.ownerBytes().length > MAX_OWNER_LENGTH) {
      return Lease.INVALID;
    }
    if (now < marker.notBefore()) {
      return new Lease(Lease.State.MARKED, marker);
    }
    return marker.notBefore() + skewMillis < now ? Lease.LAPSED
        : new Lease(Lease.State.MARK_ENDING, marker);
  }

  private static int indexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** The non-negative decimal number in {@code bytes[from, to)}, or -1 if it is not one. */
  private static long parseDigits(byte[] bytes, int from, int to) {
    if (to <= from || to - from > 18) {
      return -1;
    }
    long n = 0;
    for (int i = from; i < to; i++) {
      if (bytes[i] < '0' || bytes[i] > '9') {
        return -1;
      }
      n = n * 10 + (bytes[i] - '0');
    }
    return n;
  }

  /** A lease key's value as judged by {@link #judge}. */
  record Lease(State state, FailureMarker marker) {
    static final Lease HELD_BY_ANOTHER = new Lease(State.HELD, null);
    static final Lease LAPSED = new Lease(State.LAPSED, null);
    static final Lease INVALID = new Lease(State.INVALID, null);

    enum State {
      /** A holder's lease in force: wait for its write. */
      HELD,
      /** A failure marker whose back-off is in force: the key is not loaded meanwhile. */
      MARKED,
      /** A failure marker whose back-off just ended: its holder may be loading again. */
      MARK_ENDING,
      /** A lease or marker whose end passed more than the allowed clock skew ago. */
      LAPSED,
      /**
       * No lease value, or one bounded beyond any lease's life (a marker beyond the back-off of
       * its failure count): planted or corrupt.
       */
      INVALID
    }
  }

  /**
   * A lease rewritten by a holder whose load failed: {@code F:<failures>:<not before, epoch
   * ms>:<CAS token of the item the failed load read, 0 if absent>:<owner>}.
   */
  record FailureMarker(int failures, long notBefore, long itemCasToken, byte[] ownerBytes) {

    boolean owner(byte[] candidate) {
      return Arrays.equals(ownerBytes, candidate);
    }

    /** Whether {@code other} is the same marker: the same fields, the same owner. */
    boolean sameAs(FailureMarker other) {
      return other != null && failures == other.failures && notBefore == other.notBefore
          && itemCasToken == other.itemCasToken && Arrays.equals(ownerBytes, other.ownerBytes);
    }

    /** The marker in {@code value}, or {@code null} if it is not one. Never throws. */
    static FailureMarker parse(byte[] value) {
      if (value == null || value.length < 8 || value.length > 160 || value[0] != 'F'
          || value[1] != ':') {
        return null;
      }
      String text = new String(value, StandardCharsets.US_ASCII);
      int first = text.indexOf(':', 2);
      int second = first < 0 ? -1 : text.indexOf(':', first + 1);
      int third = second < 0 ? -1 : text.indexOf(':', second + 1);
      if (third < 0) {
        return null;
      }
      try {
        long count = Long.parseLong(text, 2, first, 10);
        long notBefore = Long.parseLong(text, first + 1, second, 10);
        long cas = Long.parseLong(text, second + 1, third, 10);
        if (count < 1 || notBefore < 0) {
          return null;
        }
        return new FailureMarker((int) Math.min(count, MAX_MARKED_FAILURES), notBefore, cas,
            Arrays.copyOfRange(value, third + 1, value.length));
      } catch (NumberFormatException e) {
        return null;
      }
    }
  }
}
