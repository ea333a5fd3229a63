package io.sustainablecache.example;

import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Coupons over JPA: reads served by Hibernate's second-level cache after the first. */
@RestController
public class CouponController {

  private final CouponRepository coupons;

  /**
   * Creates the controller.
   *
   * @param coupons the JPA repository
   */
  public CouponController(CouponRepository coupons) {
    this.coupons = coupons;
  }

  /**
   * A coupon.
   *
   * @param id the coupon id
   * @return 200 with {@code {"id", "code", "percentOff"}}, or 404
   */
  @GetMapping("/coupons/{id}")
  @Transactional(readOnly = true)
  public ResponseEntity<Map<String, Object>> coupon(@PathVariable("id") long id) {
    return coupons.findById(id).map(CouponController::body)
        .map(ResponseEntity::ok).orElseGet(() -> ResponseEntity.notFound().build());
  }

  /**
   * Changes a coupon's discount.
   *
   * @param id the coupon id
   * @param percentOff the new discount
   * @return 200 with the coupon as this transaction saves it, or 404
   */
  @PutMapping("/coupons/{id}")
  @Transactional
  public ResponseEntity<Map<String, Object>> update(@PathVariable("id") long id,
      @RequestParam("percentOff") int percentOff) {
    return coupons.findById(id).map(coupon -> {
      coupon.setPercentOff(percentOff);
      return ResponseEntity.ok(body(coupon));
    }).orElseGet(() -> ResponseEntity.notFound().build());
  }

  private static Map<String, Object> body(Coupon coupon) {
    return Map.of("id", coupon.getId(), "code", coupon.getCode(),
        "percentOff", coupon.getPercentOff());
  }
}
