package io.sustainablecache.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The lab's PNG charts: per run, request latency over time and database loads per second; per
 * scenario, comparisons with every policy or variant on the same axes (database loads per second
 * over time, and latency percentiles).
 */
final class Charts {

  private static final int WIDTH = 1000;
  private static final int HEIGHT = 420;
  private static final int MAX_POINTS = 4_000;

  /** One line of a comparison: a label and the database queries of its run. */
  record DbSeries(String label, List<SimulatedDatabase.Query> queries) {}

  /** One group of bars of a latency comparison: a label and its measured latencies (ms). */
  record LatencySeries(String label, long[] latencies) {}

  private Charts() {}

  static void write(RunResult result, Path dir) throws IOException {
    RunResult.Series series = result.series();
    String title = result.config().describe().replaceAll("\\s+", " ");
    save(latency(title, series), dir.resolve(result.config().name() + "-latency.png"));
    save(dbComparison(title + ": database loads per second",
        List.of(new DbSeries("loads", series.queries())), series.durationMillis(), 1000, false),
        dir.resolve(result.config().name() + "-db.png"));
  }

  /**
   * Writes {@code <name>-db.png} (loads per second, one line per run) and {@code
   * <name>-latency.png} (latency percentiles after warm-up, one group per run) for runs that share
   * their axes, each labelled by {@code label}.
   */
  static void compare(String title, String name, List<RunResult> runs,
      java.util.function.Function<RunResult, String> label, Path dir) throws IOException {
    List<DbSeries> db = new ArrayList<>();
    List<LatencySeries> latency = new ArrayList<>();
    long duration = 0;
    for (RunResult run : runs) {
      db.add(new DbSeries(label.apply(run), run.series().queries()));
      latency.add(new LatencySeries(label.apply(run), measuredLatencies(run.series())));
      duration = Math.max(duration, run.series().durationMillis());
    }
    save(dbComparison(title + ": database loads per second", db, duration, 1000, true),
        dir.resolve(name + "-db.png"));
    save(latencyComparison(title + ": request latency after warm-up", latency),
        dir.resolve(name + "-latency.png"));
  }

  static long[] measuredLatencies(RunResult.Series series) {
    long[] out = new long[series.arrivals().length];
    int n = 0;
    for (int i = 0; i < out.length; i++) {
      if (series.arrivals()[i] >= series.measureFromMillis()) {
        out[n++] = series.latencies()[i];
      }
    }
    return Arrays.copyOf(out, n);
  }

  static void save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path file)
      throws IOException {
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  private static XYChart latency(String title, RunResult.Series series) {
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
        .title(title
            + ": request latency (vertical lines: expiry of each cached value of the hot key)")
        .xAxisTitle("time (s)").yAxisTitle("latency (ms)").build();
    chart.getStyler().setLegendVisible(false);
    chart.getStyler().setMarkerSize(3);
    chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    // Every request that waited, plus an even sample of the rest: rendering a million points
    // would take minutes and show nothing more.
    long[] arrivals = series.arrivals();
    long[] latencies = series.latencies();
    int waited = 0;
    for (long latency : latencies) {
      waited += latency > 0 ? 1 : 0;
    }
    int keepWaited = Math.min(waited, MAX_POINTS);
    int stride = Math.max(1, (arrivals.length - waited) / Math.max(1, MAX_POINTS - keepWaited));
    int waitedStride = Math.max(1, waited / Math.max(1, keepWaited));
    double[] x = new double[arrivals.length];
    double[] y = new double[arrivals.length];
    int n = 0;
    int seenWaited = 0;
    int seenOther = 0;
    for (int i = 0; i < arrivals.length; i++) {
      boolean keep = latencies[i] > 0 ? seenWaited++ % waitedStride == 0
          : seenOther++ % stride == 0;
      if (keep) {
        x[n] = arrivals[i] / 1000.0;
        y[n] = latencies[i];
        n++;
      }
    }
    XYSeries requests = chart.addSeries("requests", Arrays.copyOf(x, n), Arrays.copyOf(y, n));
    requests.setMarker(SeriesMarkers.CIRCLE);
    for (long expiry : series.expiries()) {
      if (expiry >= 0 && expiry <= series.durationMillis()) {
        chart.addAnnotation(new AnnotationLine(expiry / 1000.0, true, false));
      }
    }
    return chart;
  }

  /** Loads (ids queried) started per bin, one step line per series. */
  static XYChart dbComparison(String title, List<DbSeries> series, long durationMillis,
      long binMillis, boolean legend) {
    int bins = (int) Math.ceil(durationMillis / (double) binMillis);
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
        .xAxisTitle("time (s)").yAxisTitle(binMillis == 1000 ? "loads per second"
            : "loads per " + binMillis + " ms").build();
    chart.getStyler().setLegendVisible(legend);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    chart.getStyler().setYAxisMin(0.0);
    double max = 1;
    for (DbSeries s : series) {
      double[] x = new double[bins];
      double[] y = new double[bins];
      for (int b = 0; b < bins; b++) {
        x[b] = b * binMillis / 1000.0;
      }
      for (SimulatedDatabase.Query q : s.queries()) {
        int b = (int) Math.floorDiv(q.start(), binMillis);
        if (b >= 0 && b < bins) {
          y[b] += q.keys();
        }
      }
      max = Math.max(max, Arrays.stream(y).max().orElse(0));
      XYSeries line = chart.addSeries(s.label(), x, y);
      line.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Step);
      line.setMarker(SeriesMarkers.NONE);
    }
    chart.getStyler().setYAxisMax(max * 1.15);
    return chart;
  }

  /** p50, p90, p99, p99.9 and max of each series, as groups of bars. */
  static CategoryChart latencyComparison(String title, List<LatencySeries> series) {
    CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
        .xAxisTitle("percentile").yAxisTitle("latency (ms)").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setYAxisMin(0.0);
    List<String> labels = List.of("p50", "p90", "p99", "p99.9", "max");
    double[] qs = {0.50, 0.90, 0.99, 0.999, 1.0};
    for (LatencySeries s : series) {
      long[] sorted = s.latencies().clone();
      Arrays.sort(sorted);
      List<Double> values = new ArrayList<>();
      for (double q : qs) {
        values.add(LabRun.percentile(sorted, q));
      }
      chart.addSeries(s.label(), labels, values);
    }
    return chart;
  }
}
