package io.sustainablecache.hibernate;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.Immutable;

/** An immutable entity cached READ_ONLY. */
@Entity
@Immutable
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_ONLY, region = "read-only-coupon")
public class ReadOnlyCoupon implements Coupon {
  @Id
  Long id;
  String code;

  protected ReadOnlyCoupon() {}

  ReadOnlyCoupon(long id, String code) {
    this.id = id;
    this.code = code;
  }

  @Override
  public String code() {
    return code;
  }

  @Override
  public void code(String code) {
    throw new UnsupportedOperationException("immutable");
  }
}
