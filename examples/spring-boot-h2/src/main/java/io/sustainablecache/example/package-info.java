/**
 * Example (not published): a Spring Boot service whose slow H2 query is cached with {@code
 * @Cacheable(sync = true)} through {@code sustainable-cache-spring-boot-starter-memcached}. {@link
 * io.sustainablecache.example.LoadDriver} puts steady load on it and prints the database queries
 * per second, which stay flat while the cache refreshes ahead.
 */
package io.sustainablecache.example;
