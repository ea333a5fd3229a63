/**
 * The stampede lab: an open-loop load generator, simulated app instances, a simulated database
 * and the caching strategies it compares (plain TTL, locking, PER as seed 000 ran it, and the
 * library's SUS), in virtual time or against a real memcached or ARCUS. Entry point: {@link
 * io.sustainablecache.lab.StampedeLab}.
 */
package io.sustainablecache.lab;
