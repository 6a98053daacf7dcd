// Line charts on the vendored uPlot (window.uPlot, loaded by index.html).
// series: [{label, x: [seconds], y: [values]}], each on its own x (runs of
// different lengths overlay on one axis: their x values are merged).

const COLOURS = ['#0b57d0', '#b3261e', '#0a6b2e', '#8a5300', '#6f2da8', '#00696f', '#5f6368'];

export function lineChart(container, { title, xLabel = 's', yLabel = '', series, width, height = 240 }) {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const data = [xs];
  for (const s of series) {
    const at = new Map(s.x.map((x, i) => [x, s.y[i]]));
    data.push(xs.map((x) => (at.has(x) ? at.get(x) : null)));
  }
  const w = width || Math.max(300, Math.min(container.clientWidth || 800, 1100));
  const opts = {
    title, width: w, height,
    scales: { x: { time: false } },
    axes: [{ label: xLabel }, { label: yLabel }],
    series: [{ label: xLabel }, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 1.5, spanGaps: true }))],
  };
  const wrap = document.createElement('div');
  wrap.className = 'chart';
  wrap.setAttribute('role', 'img');
  wrap.setAttribute('aria-label', title + ': ' + series.map((s) => s.label).join(', '));
  container.append(wrap);
  return new window.uPlot(opts, data, wrap);
}
