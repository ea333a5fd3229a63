package io.sustainablecache.jackson;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/** Value types and helpers shared by the codec's tests. */
final class Fixtures {

  /** A typical cached record: scalars, a nullable field, a list and a java.time value. */
  record Item(String name, int quantity, BigDecimal price, List<String> tags, Instant updated) {}

  /** Another record, whose JSON must not decode as an {@link Item}. */
  record Order(long id, String customer) {}

  /** A record with an untyped field, where a planted type id could try to land. */
  record Note(String title, Object body) {}

  /** A recursive type: data binding recurses once per level of it. */
  record Tree(String label, List<Tree> kids) {}

  /** A mutable bean with a no-argument constructor, getters and setters. */
  static final class Customer {
    private String name;
    private String email;
    private List<Item> items;

    public Customer() {}

    Customer(String name, String email, List<Item> items) {
      this.name = name;
      this.email = email;
      this.items = items;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public String getEmail() {
      return email;
    }

    public void setEmail(String email) {
      this.email = email;
    }

    public List<Item> getItems() {
      return items;
    }

    public void setItems(List<Item> items) {
      this.items = items;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Customer c && Objects.equals(name, c.name)
          && Objects.equals(email, c.email) && Objects.equals(items, c.items);
    }

    @Override
    public int hashCode() {
      return Objects.hash(name, email, items);
    }

    @Override
    public String toString() {
      return "Customer[" + name + ", " + email + ", " + items + "]";
    }
  }

  /**
   * Stands in for a deserialization gadget: a class on the class path that does something when
   * Jackson instantiates it and sets a property. The tests count instantiations.
   */
  public static final class Gadget {
    static final AtomicInteger CREATED = new AtomicInteger();
    static final AtomicInteger COMMANDS_RUN = new AtomicInteger();

    public Gadget() {
      CREATED.incrementAndGet();
    }

    public void setCommand(String command) {
      COMMANDS_RUN.incrementAndGet();
    }
  }

  static final String GADGET = Gadget.class.getName();

  static Item item(String name) {
    return new Item(name, 3, new BigDecimal("19.99"), List.of("a", "b"),
        Instant.parse("2026-01-02T03:04:05.678Z"));
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  /** {@code depth} opening brackets, {@code depth} closing ones when {@code closed}. */
  static String nested(int depth, boolean closed) {
    return "[".repeat(depth) + (closed ? "]".repeat(depth) : "");
  }

  /** A {@link Tree} document {@code depth} trees deep, unterminated (a planted prefix). */
  static String nestedTrees(int depth) {
    return "{\"kids\":[".repeat(depth);
  }

  /** Lists nested {@code depth} levels deep: depth 1 is {@code []}. */
  static Object nestedLists(int depth) {
    List<Object> inner = new ArrayList<>();
    for (int i = 1; i < depth; i++) {
      List<Object> outer = new ArrayList<>();
      outer.add(inner);
      inner = outer;
    }
    return inner;
  }

  private Fixtures() {}
}
