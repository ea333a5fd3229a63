package io.sustainablecache.arcus;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.sustainablecache.spi.CasOutcome;
import io.sustainablecache.spi.StoreItem;
import io.sustainablecache.testkit.memcached.MemcachedServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.spy.memcached.ArcusClient;
import net.spy.memcached.ArcusClientException.InitializeClientException;
import net.spy.memcached.ArcusClientPool;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.NotExistsServiceCodeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ArcusStore} over clients that find their cache nodes the ARCUS way, through ZooKeeper:
 * {@code ArcusClient.createArcusClient} and {@code ArcusClient.createArcusClientPool} against an
 * {@linkplain EmbeddedZooKeeper embedded ZooKeeper server} whose znodes point at real memcached
 * servers.
 *
 * <h2>The znodes an ARCUS client needs</h2>
 * For a service code {@code svc}, the client (1.13's {@code CacheManager} and
 * {@code CacheMonitor}) reads and writes exactly these:
 * <ul>
 *   <li>{@code /arcus/cache_list/svc} must exist, or creation fails at once with
 *       {@link NotExistsServiceCodeException}. Its children are the cache nodes, named
 *       {@code <ip>:<port>-<hostname>}; the client keeps the part before the first {@code '-'}
 *       as the address and watches the children, so adding or removing one changes the node
 *       list of every live client. In a real cluster each ARCUS server registers itself here
 *       with an ephemeral znode; this test creates persistent ones for plain memcached servers.
 *       With no children at all, {@code createArcusClient} blocks forever, so every service
 *       here gets a node before a client is created.</li>
 *   <li>{@code /arcus/client_list/svc} must exist: the client registers itself with an
 *       ephemeral child named
 *       {@code <hostname>_<ip>_<poolSize>_java_<clientVersion>_<yyyyMMddHHmmss>_<zkSessionId>}
 *       and fails creation with {@link InitializeClientException} if it cannot. The child
 *       disappears when {@code shutdown()} closes the client's ZooKeeper session.</li>
 *   <li>{@code /arcus_repl/cache_list/svc} must <em>not</em> exist: if it does, the client
 *       switches to ARCUS replication mode and expects {@code group^M^ip:port-host} names.</li>
 * </ul>
 * {@code /arcus/cache_server_mapping} and {@code /arcus/cache_server_group} are read by ARCUS
 * servers (to learn their service code) and by the ARCUS admin tools, never by the Java client,
 * so this test does not create them.
 *
 * <p>{@code createArcusClient} waits without a bound for the first cache list, so the class is
 * bounded by a timeout. The client's ZooKeeper connection needs a ZooKeeper client that works on
 * Java 14+, which is why this module replaces the ARCUS client's ZooKeeper 3.4.14 with 3.5.9 (see
 * its {@code pom.xml}); with 3.4.14 every test here fails to connect.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ArcusClusterIT {

  private static final Duration PATIENCE = Duration.ofSeconds(20);
  private static final AtomicInteger SERVICES = new AtomicInteger();

  private static EmbeddedZooKeeper zooKeeper;

  private final List<Runnable> cleanup = new ArrayList<>();

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zooKeeper = EmbeddedZooKeeper.start();
  }

  @AfterAll
  static void stopZooKeeper() {
    if (zooKeeper != null) {
      zooKeeper.close();
    }
  }

  @AfterEach
  void releaseClientsAndServers() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  @Test
  void aClientFoundThroughZooKeeperRegistersItselfAndServesTheStore(TestInfo test)
      throws Exception {
    String service = newService(MemcachedServer.shared().address());

    ArcusClient client = ArcusClient.createArcusClient(
        zooKeeper.connectString(), service, clientSettings());
    cleanup.add(client::shutdown);
    ArcusStore store = ArcusStore.of(client);

    assertThat(zooKeeper.children(clientList(service))).singleElement()
        .asString().matches(".+_.+_1_java_.+_\\d{14}_\\d+");
    Clients.awaitConnected(client, MemcachedServer.shared().address());
    assertRoundTrip(store, key(test));

    client.shutdown();
    await().atMost(PATIENCE).untilAsserted(
        () -> assertThat(zooKeeper.children(clientList(service))).isEmpty());
  }

  @Test
  void aPoolFoundThroughZooKeeperServesTheStoreFromEveryClient(TestInfo test) throws Exception {
    String service = newService(MemcachedServer.shared().address());

    ArcusClientPool pool = ArcusClient.createArcusClientPool(
        zooKeeper.connectString(), service, clientSettings(), 2);
    cleanup.add(pool::shutdown);
    ArcusStore store = ArcusStore.of(pool);

    assertThat(zooKeeper.children(clientList(service))).singleElement()
        .asString().contains("_2_java_");
    assertThat(pool.getAllClients()).hasSize(2);
    for (ArcusClient member : pool.getAllClients()) {
      Clients.awaitConnected(member, MemcachedServer.shared().address());
    }
    String key = key(test);
    assertRoundTrip(store, key);

    join(store.set(key, bytes("through the pool"), 60));
    for (ArcusClient member : pool.getAllClients()) {
      assertThat(join(ArcusStore.of(member).gets(key))).get()
          .extracting(StoreItem::value).isEqualTo(bytes("through the pool"));
    }

    pool.shutdown();
    await().atMost(PATIENCE).untilAsserted(
        () -> assertThat(zooKeeper.children(clientList(service))).isEmpty());
  }

  @Test
  void theClientFollowsTheCacheListWhenNodesChange(TestInfo test) throws Exception {
    MemcachedServer first = startPrivateServer();
    MemcachedServer second = startPrivateServer();
    String service = newService(first.address());
    ArcusClient client = ArcusClient.createArcusClient(
        zooKeeper.connectString(), service, clientSettings());
    cleanup.add(client::shutdown);
    ArcusStore store = ArcusStore.of(client);
    Clients.awaitConnected(client, first.address());
    String key = key(test);
    join(store.set(key, bytes("on the first node"), 60));

    zooKeeper.createPersistent(cacheList(service) + "/" + nodeName(second.address()));
    zooKeeper.delete(cacheList(service) + "/" + nodeName(first.address()));

    await().atMost(PATIENCE).untilAsserted(() -> assertThat(client.getAvailableServers())
        .containsExactly(second.address()));
    assertThat(join(store.gets(key))).isEmpty();
    join(store.set(key, bytes("on the second node"), 60));
    ArcusClient direct = Clients.connectedTo(second.address());
    cleanup.add(direct::shutdown);
    assertThat(join(ArcusStore.of(direct).gets(key))).get()
        .extracting(StoreItem::value).isEqualTo(bytes("on the second node"));
  }

  @Test
  void creationFailsWhenTheServiceCodeIsUnknown() {
    assertThatThrownBy(() -> ArcusClient.createArcusClient(
        zooKeeper.connectString(), "no-such-service", clientSettings()))
        .isInstanceOf(NotExistsServiceCodeException.class);
  }

  @Test
  void creationFailsWhenTheClientListIsMissing() throws Exception {
    String service = "no-client-list-" + SERVICES.incrementAndGet();
    zooKeeper.createPersistent(
        cacheList(service) + "/" + nodeName(MemcachedServer.shared().address()));

    assertThatThrownBy(() -> ArcusClient.createArcusClient(
        zooKeeper.connectString(), service, clientSettings()))
        .isInstanceOf(InitializeClientException.class);
  }

  /**
   * The settings the {@link ArcusStore} documentation recommends, in a new builder for every
   * client: {@code createArcusClient} modifies the builder it is given.
   */
  private static ConnectionFactoryBuilder clientSettings() {
    return Clients.recommendedSettings();
  }

  /** Creates a fresh service whose only cache node is {@code node}. */
  private static String newService(InetSocketAddress node) throws Exception {
    String service = "sustainable-cache-" + SERVICES.incrementAndGet();
    zooKeeper.createPersistent(cacheList(service) + "/" + nodeName(node));
    zooKeeper.createPersistent(clientList(service));
    return service;
  }

  private MemcachedServer startPrivateServer() {
    MemcachedServer server = MemcachedServer.startLocal();
    cleanup.add(server::stop);
    return server;
  }

  private static String cacheList(String service) {
    return "/arcus/cache_list/" + service;
  }

  private static String clientList(String service) {
    return "/arcus/client_list/" + service;
  }

  /** A cache_list child: {@code <ip>:<port>-<hostname>}. */
  private static String nodeName(InetSocketAddress address) {
    return address.getAddress().getHostAddress() + ":" + address.getPort() + "-test-host";
  }

  private static void assertRoundTrip(ArcusStore store, String key) {
    join(store.set(key, bytes("v1"), 60));
    StoreItem first = join(store.gets(key)).orElseThrow();
    assertThat(first.value()).isEqualTo(bytes("v1"));

    assertThat(join(store.cas(key, first.casToken(), bytes("v2"), 60)))
        .isEqualTo(CasOutcome.STORED);
    assertThat(join(store.cas(key, first.casToken(), bytes("v3"), 60)))
        .isEqualTo(CasOutcome.EXISTS);
    assertThat(join(store.gets(key))).get().extracting(StoreItem::value).isEqualTo(bytes("v2"));
    assertThat(join(store.getsAll(List.of(key)))).containsOnlyKeys(key);
    assertThat(join(store.add(key, bytes("v4"), 60))).isFalse();
    assertThat(join(store.delete(key))).isTrue();
    assertThat(join(store.add(key, bytes("v5"), 60))).isTrue();
    assertThat(join(store.delete(key))).isTrue();
    assertThat(join(store.gets(key))).isEmpty();
  }

  /** Waits for a store operation, which completes within its timeout whatever happens. */
  private static <T> T join(CompletableFuture<T> future) {
    try {
      return future.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("the store operation failed", e);
    }
  }

  private static String key(TestInfo test) {
    return "arcus-cluster-it." + test.getTestMethod().orElseThrow().getName() + "."
        + System.nanoTime();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(US_ASCII);
  }
}
