package io.sustainablecache.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Draws a run's two PNG charts: request latency over time, and database queries per second. */
final class Charts {

  private static final int WIDTH = 1000;
  private static final int HEIGHT = 420;
  private static final int MAX_POINTS = 4_000;

  private Charts() {}

  static void write(RunResult result, Path dir) throws IOException {
    RunResult.Series series = result.series();
    String title = result.config().describe().replaceAll("\\s+", " ");
    BitmapEncoder.saveBitmap(latency(title, series),
        dir.resolve(result.config().name() + "-latency.png").toString(),
        BitmapEncoder.BitmapFormat.PNG);
    BitmapEncoder.saveBitmap(dbRate(title, series),
        dir.resolve(result.config().name() + "-db.png").toString(),
        BitmapEncoder.BitmapFormat.PNG);
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

  private static XYChart dbRate(String title, RunResult.Series series) {
    int seconds = (int) Math.ceil(series.durationMillis() / 1000.0);
    double[] x = new double[seconds];
    double[] y = new double[seconds];
    for (int s = 0; s < seconds; s++) {
      x[s] = s;
    }
    for (long start : series.queryStarts()) {
      int s = (int) Math.floorDiv(start, 1000L);
      if (s >= 0 && s < seconds) {
        y[s]++;
      }
    }
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
        .title(title + ": database queries per second").xAxisTitle("time (s)")
        .yAxisTitle("queries started").build();
    chart.getStyler().setLegendVisible(false);
    chart.getStyler().setYAxisMin(0.0);
    chart.getStyler().setYAxisMax(Math.max(1.0, Arrays.stream(y).max().orElse(1)) * 1.1);
    XYSeries queries = chart.addSeries("queries", x, y);
    queries.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Step);
    queries.setMarker(SeriesMarkers.NONE);
    return chart;
  }
}
