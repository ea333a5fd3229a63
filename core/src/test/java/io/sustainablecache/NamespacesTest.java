package io.sustainablecache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.sustainablecache.testing.InMemoryStore;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Deriving namespaces from cache names: valid, stable, and never shared by two names. */
final class NamespacesTest {

  private static final String VALID = "[A-Za-z0-9_.+][A-Za-z0-9_.+-]{0,63}";

  @Test
  void aValidName_isItsOwnNamespace_afterThePrefix() {
    assertThat(Namespaces.derive("svc.", "books")).isEqualTo("svc.books");
    assertThat(Namespaces.derive("shop-", "io.example.Coupon")).isEqualTo("shop-io.example.Coupon");
    assertThat(Namespaces.derive("", "x".repeat(64))).isEqualTo("x".repeat(64));
  }

  @Test
  void aNameThatHadToChange_getsAHashSuffix_soNamesThatSanitizeAlikeDoNotCollide() {
    List<String> names = List.of("a b", "a:b", "a_b", "a/b", "-x", "_x", "", "사용자",
        "x".repeat(65), "x".repeat(64) + "y", "x".repeat(100));
    Set<String> namespaces = new HashSet<>();
    for (String name : names) {
      String namespace = Namespaces.derive("", name);
      assertThat(namespace).as(name).matches(VALID);
      assertThat(namespaces.add(namespace)).as("%s has a namespace of its own", name).isTrue();
    }
    assertThat(Namespaces.derive("", "a b")).startsWith("a_b+").hasSize(3 + 9)
        .as("the same on every instance").isEqualTo(Namespaces.derive("", "a b"));
    assertThat(Namespaces.derive("", "-x")).startsWith("_x+");
    assertThat(Namespaces.derive("p-", "x".repeat(100))).hasSize(64).startsWith("p-xxx");
  }

  @Test
  void thePrefixIsPartOfTheText_sanitizedAndHashedWithTheName() {
    assertThat(Namespaces.derive("a b.", "c")).startsWith("a_b.c+")
        .isNotEqualTo(Namespaces.derive("a:b.", "c"));
    assertThat(Namespaces.derive("a", "b")).isEqualTo(Namespaces.derive("", "ab"));
  }

  @Test
  void everyDerivedNamespace_isAcceptedByTheBuilder() {
    for (String name : List.of("a b", "-x", "", "x".repeat(100), "사용자/v2")) {
      assertThat(SustainableCache.builder(InMemoryStore.create())
          .namespace(Namespaces.derive("svc.", name)).ttl(Duration.ofMinutes(1))).isNotNull();
    }
  }

  @Test
  void theBuilderRefusesInvalidNamespaces_withItsMessages() {
    SustainableCacheBuilder<byte[]> builder = SustainableCache.builder(InMemoryStore.create());
    assertThatIllegalArgumentException().isThrownBy(() -> builder.namespace(""))
        .withMessage("namespace must have 1 to 64 characters: \"\" has 0");
    assertThatIllegalArgumentException().isThrownBy(() -> builder.namespace("-a"))
        .withMessageContaining("must not start with '-'");
    assertThatIllegalArgumentException().isThrownBy(() -> builder.namespace("a b"))
        .withMessage("namespace may only contain [A-Za-z0-9_.+-]: \"a b\" has ' ' at index 1");
    assertThatNullPointerException().isThrownBy(() -> Namespaces.derive(null, "a"));
    assertThatNullPointerException().isThrownBy(() -> Namespaces.derive("", null));
  }
}
