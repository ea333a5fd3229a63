package io.sustainablecache.testkit.memcached;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.opentest4j.TestAbortedException;

class MemcachedServerTest {

  @Test
  void parsesHostAndPort() {
    InetSocketAddress address = MemcachedServer.parseAddress("127.0.0.1:11211");
    assertThat(address.getAddress().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(address.getPort()).isEqualTo(11211);
  }

  @Test
  void parsesABracketedIpv6Host() {
    InetSocketAddress address = MemcachedServer.parseAddress("[::1]:21211");
    assertThat(address.getAddress().isLoopbackAddress()).isTrue();
    assertThat(address.getAddress().getAddress()).hasSize(16);
    assertThat(address.getPort()).isEqualTo(21211);
  }

  @Test
  void parsesAHostName() {
    InetSocketAddress address = MemcachedServer.parseAddress("localhost:11211");
    assertThat(address.isUnresolved()).isFalse();
    assertThat(address.getHostString()).isEqualTo("localhost");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "localhost", "localhost:", ":11211", "::1:11211", "[::1]",
      "[]:11211", "localhost:port", "localhost:0", "localhost:65536", "localhost:-1"})
  void rejectsAMalformedAddressNamingTheVariable(String value) {
    assertThatThrownBy(() -> MemcachedServer.parseAddress(value))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("MEMCACHED_ADDRESS must be host:port")
        .hasMessageContaining("\"" + value + "\"");
  }

  @Test
  void rejectsAnUnresolvableHost() {
    assertThatThrownBy(() -> MemcachedServer.parseAddress("no-such-host.invalid:11211"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot resolve host \"no-such-host.invalid\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"true", "TRUE", " true "})
  void aMissingServerFailsOnCi(String ci) {
    assertThat(MemcachedServer.unavailable(MemcachedServer.SHARED_HOW_TO, ci))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(MemcachedServer.SHARED_HOW_TO)
        .hasMessageContaining("CI=true");
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(strings = {"", "false", "1", "${env.CI}"})
  void aMissingServerAbortsTheTestElsewhere(String ci) {
    assertThat(MemcachedServer.unavailable(MemcachedServer.LOCAL_HOW_TO, ci))
        .isExactlyInstanceOf(TestAbortedException.class)
        .hasMessage(MemcachedServer.LOCAL_HOW_TO);
  }

  @Test
  void theMessagesSayHowToGetAServer() {
    assertThat(MemcachedServer.SHARED_HOW_TO)
        .contains("apt-get install -y memcached", "MEMCACHED_ADDRESS=host:port", "Docker");
    assertThat(MemcachedServer.LOCAL_HOW_TO).contains("apt-get install -y memcached");
    assertThat(MemcachedServer.SHARED_HOW_TO_WITHOUT_TESTCONTAINERS)
        .contains("apt-get install -y memcached", "MEMCACHED_ADDRESS=host:port")
        .doesNotContain("Docker");
  }
}
