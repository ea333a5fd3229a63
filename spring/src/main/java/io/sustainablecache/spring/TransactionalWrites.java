package io.sustainablecache.spring;

import io.sustainablecache.SustainableCache;
import io.sustainablecache.WriteFence;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * One Spring cache's writes inside Spring-managed transactions: inside an active, non-read-only
 * transaction synchronization, {@link #evict}, {@link #put} and {@link #clear} fence the key (or
 * clear) at once and complete after the transaction, through {@link WriteFence}. Outside one they
 * answer {@code false} and the caller writes at once, as without transactions.
 *
 * <p>The transaction's changes of this cache are one {@link TransactionSynchronization}, bound as
 * a transaction resource under this object: each key is fenced once per transaction, and its last
 * change decides how it completes. A {@code REQUIRES_NEW} transaction suspends the outer one's
 * synchronization (and with it this resource) and has its own, completed at its own end; a nested
 * (savepoint) transaction shares the outer one's, completed when the outer one ends. A rollback
 * to a savepoint turns the changes made after it into evicts: what the database will commit for
 * those keys is then not known here (a key's value put before the savepoint may be overwritten
 * by the rolled-back change), and a tombstone is always safe.
 *
 * <p>Only loaded when spring-tx is on the class path ({@link SustainableCacheManager} checks).
 * Thread-safe: the bound synchronization is confined to the transaction's thread, as Spring's
 * transaction synchronization is.
 */
final class TransactionalWrites {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionalWrites.class);

  private final String name;
  private final SustainableCache<Object> cache;

  TransactionalWrites(String name, SustainableCache<Object> cache) {
    this.name = name;
    this.cache = cache;
  }

  /**
   * Fences the key for the current transaction, to be invalidated after it.
   *
   * @param key the encoded key
   * @return {@code false} outside a writable transaction: the caller invalidates at once
   * @throws io.sustainablecache.spi.StoreException if the fence could not be placed and the cache
   *     fails such writes (fail-writes-when-store-down; by default its commit owes the key)
   */
  boolean evict(String key) {
    return put(key, null);
  }

  /**
   * Fences the key for the current transaction, to hold {@code value} after its commit.
   *
   * @param key the encoded key
   * @param value the committed value, or {@code null} to invalidate the key after the commit
   * @return {@code false} outside a writable transaction: the caller writes at once
   * @throws io.sustainablecache.spi.StoreException if the fence could not be placed and the cache
   *     fails such writes (fail-writes-when-store-down; by default its commit owes the key)
   */
  boolean put(String key, Object value) {
    Changes changes = changes();
    if (changes == null) {
      return false;
    }
    changes.change(key, value);
    return true;
  }

  /**
   * Clears the cache now (through {@code invalidateAll}) and again after the current
   * transaction's commit: what loads read during the transaction is then gone too. Every key
   * changed in the transaction, before or after the clear, is invalidated after the commit: on
   * stores that clear by removing the namespace's keys (ARCUS {@code flush_prefix}), the clear
   * also removes the keys' fences, so a value put could not be told from one a load cached.
   *
   * @return {@code false} outside a writable transaction: the caller clears at once
   * @throws UnsupportedOperationException if the store cannot clear a namespace
   * @throws io.sustainablecache.spi.StoreException if the store failed
   */
  boolean clear() {
    Changes changes = changes();
    if (changes == null) {
      return false;
    }
    cache.invalidateAll();
    changes.cleared();
    return true;
  }

  /**
   * Whether the current transaction changed (fenced) the key: it reads its own change from the
   * database, since until its commit (and for the commit window after {@code beforeCommit}) the
   * cache answers with the value the fence replaced. True until the transaction completed.
   *
   * @param key the encoded key
   */
  boolean changed(String key) {
    Object changes = TransactionSynchronizationManager.getResource(this);
    return changes != null && ((Changes) changes).pending.containsKey(key);
  }

  /** The current writable transaction's changes of this cache (registered now), or null. */
  private Changes changes() {
    if (!TransactionSynchronizationManager.isSynchronizationActive()
        || TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
      return null;
    }
    Changes changes = (Changes) TransactionSynchronizationManager.getResource(this);
    if (changes == null) {
      changes = new Changes();
      TransactionSynchronizationManager.registerSynchronization(changes);
      TransactionSynchronizationManager.bindResource(this, changes);
    }
    return changes;
  }

  @Override
  public String toString() {
    return "TransactionalWrites[" + name + "]";
  }

  /** A fenced key and its last change in the transaction. */
  private static final class Pending {
    final WriteFence<Object> fence;
    /** The value to cache after the commit; {@code null} to invalidate. */
    Object value;
    /** The transaction's change count at this key's last change. */
    long changedAt;

    Pending(WriteFence<Object> fence) {
      this.fence = fence;
    }
  }

  /** One transaction's changes of this cache. */
  private final class Changes implements TransactionSynchronization {
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    /** The change count when each savepoint of the transaction was created. */
    private final Map<Object, Long> savepoints = new IdentityHashMap<>();
    private long changes;
    private boolean cleared;

    void change(String key, Object value) {
      Pending p = pending.get(key);
      if (p == null) {
        p = new Pending(cache.fence(key)); // throws before anything is recorded
        pending.put(key, p);
      }
      p.value = value;
      p.changedAt = ++changes;
    }

    void cleared() {
      cleared = true;
    }

    private void forgetValuesAfter(long change) {
      for (Pending p : pending.values()) {
        if (p.changedAt > change) {
          p.value = null;
        }
      }
    }

    @Override
    public void suspend() {
      TransactionSynchronizationManager.unbindResource(TransactionalWrites.this);
    }

    @Override
    public void resume() {
      TransactionSynchronizationManager.bindResource(TransactionalWrites.this, this);
    }

    @Override
    public void savepoint(Object savepoint) {
      savepoints.put(savepoint, changes);
    }

    @Override
    public void savepointRollback(Object savepoint) {
      forgetValuesAfter(savepoints.getOrDefault(savepoint, 0L));
    }

    /**
     * Right before the commit: every fence is marked committing, so that it answers reads with
     * the value it replaced for the commit window only. A fence whose store does not confirm it
     * throws, and Spring rolls the transaction back: after a commit, other instances could answer
     * with the replaced value.
     */
    @Override
    public void beforeCommit(boolean readOnly) {
      for (Pending p : pending.values()) {
        p.fence.beforeCommit();
      }
    }

    @Override
    public void afterCompletion(int status) {
      TransactionSynchronizationManager.unbindResourceIfPossible(TransactionalWrites.this);
      boolean committed = status == STATUS_COMMITTED;
      if (committed && cleared) {
        try {
          cache.invalidateAll();
        } catch (RuntimeException e) {
          LOG.warn("cache '{}': clearing it again after the transaction's commit failed; values"
              + " loaded during the transaction may be served until they expire", name, e);
        }
      }
      for (Map.Entry<String, Pending> e : pending.entrySet()) {
        Pending p = e.getValue();
        try {
          if (!committed) {
            p.fence.rolledBack();
          } else if (p.value == null || cleared) {
            p.fence.committed();
          } else {
            p.fence.committed(p.value);
          }
        } catch (RuntimeException ex) {
          // committed(value) of a value too large: the fence became a tombstone all the same
          LOG.warn("cache '{}': completing the write fence of key '{}' after the transaction"
              + " failed", name, e.getKey(), ex);
        }
      }
    }
  }
}
