package io.sustainablecache.hibernate;

import jakarta.persistence.Cacheable;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/** A product as the first version of a service maps it; {@link ProductV2} is the next. */
@Entity(name = "Product")
@Table(name = "product")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "product")
public class Product {
  @Id
  Long id;
  String name;
  Integer stock;

  protected Product() {}

  Product(long id, String name, int stock) {
    this.id = id;
    this.name = name;
    this.stock = stock;
  }
}
