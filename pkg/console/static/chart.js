// Line charts on the vendored uPlot (window.uPlot, loaded by index.html).
// series: [{label, x: [seconds], y: [values]}], each on its own x (runs of
// different lengths overlay on one axis: their x values are merged).
// With points: true the series are points, not lines, and every point is
// kept, also where one series has two at one x (a search's trials that
// repeat a target): each point gets its own row of the data; a series
// with hollow: true draws its points hollow (a scout search's short
// trials, beside the filled full-length ones).

const COLOURS = ['#0b57d0', '#b3261e', '#0a6b2e', '#8a5300', '#6f2da8', '#00696f', '#5f6368'];

// merged is uPlot's data for lines: one row per distinct x, a series'
// value at each (null where it has none; a repeated x: its last value).
function merged(series) {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const data = [xs];
  for (const s of series) {
    const at = new Map(s.x.map((x, i) => [x, s.y[i]]));
    data.push(xs.map((x) => (at.has(x) ? at.get(x) : null)));
  }
  return data;
}

// perPoint is uPlot's data for points: one row per point of any series,
// sorted by x, the other series null on it.
function perPoint(series) {
  const pts = series.flatMap((s, k) => s.x.map((x, i) => ({ x, k, y: s.y[i] })));
  pts.sort((a, b) => a.x - b.x || a.k - b.k);
  return [pts.map((p) => p.x), ...series.map((_, k) => pts.map((p) => (p.k === k ? p.y : null)))];
}

export function lineChart(container, { title, xLabel = 's', yLabel = '', series, width, height = 240, points = false }) {
  const data = points ? perPoint(series) : merged(series);
  const w = width || Math.max(300, Math.min(container.clientWidth || 800, 1100));
  const look = points
    ? (i, s) => ({ stroke: COLOURS[i % COLOURS.length], width: 0, paths: () => null,
      points: { show: true, size: 8, width: s.hollow ? 2 : 1, fill: s.hollow ? '#fff' : COLOURS[i % COLOURS.length] } })
    : (i) => ({ stroke: COLOURS[i % COLOURS.length], width: 1.5, spanGaps: true });
  const opts = {
    title, width: w, height,
    scales: { x: { time: false } },
    axes: [{ label: xLabel }, { label: yLabel }],
    series: [{ label: xLabel }, ...series.map((s, i) => Object.assign({ label: s.label }, look(i, s)))],
  };
  const wrap = document.createElement('div');
  wrap.className = 'chart';
  wrap.setAttribute('role', 'img');
  wrap.setAttribute('aria-label', title + ': ' + series.map((s) => s.label).join(', '));
  // data-points: how many values the chart holds (what a test can count).
  wrap.dataset.points = String(data.slice(1).reduce((n, col) => n + col.filter((v) => v !== null && v !== undefined).length, 0));
  container.append(wrap);
  return new window.uPlot(opts, data, wrap);
}
