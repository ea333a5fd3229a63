package io.sustainablecache.hibernate;

import jakarta.persistence.Cacheable;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import java.util.ArrayList;
import java.util.List;
import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;
import org.hibernate.annotations.NaturalId;
import org.hibernate.annotations.NaturalIdCache;

/** A shop with a cached collection of tags and a cached, mutable natural id. */
@Entity
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "shop")
@NaturalIdCache
public class Shop {
  @Id
  Long id;
  @NaturalId(mutable = true)
  String code;
  @ElementCollection(fetch = FetchType.LAZY)
  @Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "shop-tags")
  List<String> tags = new ArrayList<>();

  protected Shop() {}

  Shop(long id, String code, List<String> tags) {
    this.id = id;
    this.code = code;
    this.tags.addAll(tags);
  }
}
