package io.sustainablecache.hibernate;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/** An unversioned entity cached NONSTRICT_READ_WRITE. */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.NONSTRICT_READ_WRITE, region = "nonstrict-coupon")
public class NonstrictCoupon implements Coupon {
  @Id
  Long id;
  String code;

  protected NonstrictCoupon() {}

  NonstrictCoupon(long id, String code) {
    this.id = id;
    this.code = code;
  }

  @Override
  public String code() {
    return code;
  }

  @Override
  public void code(String code) {
    this.code = code;
  }
}
