package io.sustainablecache.hibernate;

/** The coupon entities of the tests, one per access type, read and changed alike. */
interface Coupon {
  String code();

  void code(String code);
}
