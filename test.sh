#!/usr/bin/env bash
# The tests, as the README runs them: unit and integration tests against a real memcached.
#
# Installs memcached when there is no memcached binary (apt-get, with sudo when not root; or
# Homebrew), prints the versions used, then runs `mvn -B -T 4 verify -Dshaded.jars.skip=true` with any
# arguments given here.
# With CI=true a test that finds no memcached fails instead of being skipped.
set -euo pipefail
cd "$(dirname "$0")"

# Where the tests look for the binary (MemcachedServer): an executable regular file on PATH,
# in /usr/bin or in /usr/local/bin.
find_memcached() {
  local dir
  local IFS=:
  for dir in $PATH /usr/bin /usr/local/bin; do
    if [ -n "$dir" ] && [ -f "$dir/memcached" ] && [ -x "$dir/memcached" ]; then
      echo "$dir/memcached"
      return 0
    fi
  done
  return 1
}

if ! find_memcached >/dev/null; then
  echo "test.sh: memcached not found; installing it"
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=()
    if [ "$(id -u)" != "0" ]; then
      if ! command -v sudo >/dev/null 2>&1; then
        echo "test.sh: installing memcached needs root or sudo: run 'apt-get install -y memcached' as root" >&2
        exit 1
      fi
      SUDO=(sudo)
    fi
    ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached
  elif command -v brew >/dev/null 2>&1; then
    brew install memcached
  else
    echo "test.sh: no memcached and no apt-get or brew to install it: install memcached, or set MEMCACHED_ADDRESS=host:port (some tests still need the binary)" >&2
    exit 1
  fi
fi
memcached_bin="$(find_memcached)" || { echo "test.sh: memcached is still not installed" >&2; exit 1; }

echo "memcached: $memcached_bin ($("$memcached_bin" -V))"
java -version
mvn -B -v

# Four modules at a time on two cores: most integration tests wait on the network and on
# timers, so the adapters', Hibernate's and the lab's tests overlap; the model checks
# (core-model-checks: about two minutes of CPU that nothing depends on) run beside them at a
# lower scheduling priority, on the CPU the others leave. No shaded jars (the lab's and JMH's;
# `mvn package` builds them): no test runs them. Where the time goes: docs/testing.md.
mvn -B -T 4 verify -Dshaded.jars.skip=true "$@"
