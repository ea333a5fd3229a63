package io.sustainablecache.hibernate;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * An H2 data source that can run an action once, right after a query of the thread that armed it
 * has executed (H2 holds the rows read by then) and before Hibernate goes on with them: a reader
 * that read the old row, paused while a writer commits.
 */
final class HookedDataSource implements DataSource {

  private final JdbcDataSource h2 = new JdbcDataSource();
  private final AtomicReference<Thread> armedThread = new AtomicReference<>();
  private volatile Runnable action;

  HookedDataSource(String url) {
    h2.setURL(url);
    h2.setUser("sa");
  }

  /** Runs {@code afterQuery} once, after the next query the calling thread executes. */
  void afterNextQuery(Runnable afterQuery) {
    action = afterQuery;
    armedThread.set(Thread.currentThread());
  }

  private void queried() {
    if (armedThread.compareAndSet(Thread.currentThread(), null)) {
      action.run();
    }
  }

  @Override
  public Connection getConnection() throws SQLException {
    return connection(h2.getConnection());
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    return connection(h2.getConnection(user, password));
  }

  private Connection connection(Connection real) {
    InvocationHandler handler = (proxy, method, args) -> {
      Object result = invoke(real, method, args);
      if (result instanceof PreparedStatement statement) {
        return statement(statement);
      }
      return result;
    };
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {Connection.class}, handler);
  }

  private PreparedStatement statement(PreparedStatement real) {
    InvocationHandler handler = (proxy, method, args) -> {
      Object result = invoke(real, method, args);
      if (method.getName().equals("executeQuery")) {
        queried();
      }
      return result;
    };
    return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PreparedStatement.class}, handler);
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {}

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() {
    return Logger.getGlobal();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return false;
  }
}
