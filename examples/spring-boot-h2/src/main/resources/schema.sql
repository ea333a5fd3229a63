CREATE TABLE IF NOT EXISTS product (
  id BIGINT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  price_cents BIGINT NOT NULL
);

-- Coupons: read through JPA, cached in Hibernate's second-level cache (Coupon.java).
CREATE TABLE IF NOT EXISTS coupon (
  id BIGINT PRIMARY KEY,
  code VARCHAR(40) NOT NULL,
  percent_off INT NOT NULL,
  version BIGINT NOT NULL
);
