package io.sustainablecache.example;

/**
 * A product row; stored in memcached as JSON ({@code sustainable-cache.caches.products.value-type}).
 *
 * @param id the product id
 * @param name its name
 * @param priceCents its price in cents
 */
public record Product(long id, String name, long priceCents) {}
