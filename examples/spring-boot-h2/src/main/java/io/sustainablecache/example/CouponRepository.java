package io.sustainablecache.example;

import org.springframework.data.jpa.repository.JpaRepository;

/** Coupons by id: {@code findById} reads Hibernate's second-level cache first. */
public interface CouponRepository extends JpaRepository<Coupon, Long> {}
