package io.sustainablecache.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one logger category of the core, {@code io.sustainablecache.SustainableCache}, named by a
 * string so that internals need not refer to the API types to log.
 */
final class Log {

  static final Logger LOGGER = LoggerFactory.getLogger("io.sustainablecache.SustainableCache");

  private Log() {}
}
