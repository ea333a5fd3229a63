package io.sustainablecache.example;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Version;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/**
 * A coupon: a JPA entity in Hibernate's second-level cache (region {@code coupon}, {@code
 * READ_WRITE}: a change is fenced on the store while its transaction runs). Not thread-safe (an
 * entity of one session).
 */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = Coupon.REGION)
public class Coupon {

  /** The coupon's second-level cache region. */
  public static final String REGION = "coupon";

  @Id
  private Long id;

  private String code;

  @Column(name = "percent_off")
  private int percentOff;

  @Version
  private long version;

  /** For JPA. */
  protected Coupon() {}

  /**
   * The id.
   *
   * @return the id
   */
  public Long getId() {
    return id;
  }

  /**
   * The code customers type.
   *
   * @return the code
   */
  public String getCode() {
    return code;
  }

  /**
   * The discount.
   *
   * @return percent off, 0 to 100
   */
  public int getPercentOff() {
    return percentOff;
  }

  /**
   * Changes the discount (saved when the transaction commits).
   *
   * @param percentOff percent off, 0 to 100
   */
  public void setPercentOff(int percentOff) {
    this.percentOff = percentOff;
  }
}
