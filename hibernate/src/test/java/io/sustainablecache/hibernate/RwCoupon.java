package io.sustainablecache.hibernate;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.time.LocalDate;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/** A versioned entity cached READ_WRITE, with properties of several allow-listed types. */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "rw-coupon")
public class RwCoupon implements Coupon {
  /** A coupon's state. */
  public enum Status { ACTIVE, USED }

  @Id
  Long id;
  @Version
  int version;
  String code;
  BigDecimal amount;
  LocalDate validUntil;
  Status status;
  byte[] note;

  protected RwCoupon() {}

  RwCoupon(long id, String code) {
    this.id = id;
    this.code = code;
    this.amount = new BigDecimal("12.50");
    this.validUntil = LocalDate.of(2030, 1, 31);
    this.status = Status.ACTIVE;
    this.note = new byte[] {1, 2, 3};
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
