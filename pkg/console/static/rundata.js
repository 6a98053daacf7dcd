// A run's data as the run page and the compare page show it: its result,
// its per-second record, and its headline figures. Both pages show the
// same rows from the same function, so a figure reads the same on each.
import { api, text, ApiError } from './lib.js';

const enc = encodeURIComponent;

// listed: whether a run's status (GET /v1/runs/{id}, which lists the
// run's files, leaving the list out when there are none) names file
// name. The pages ask for no file a run does not have: the 404 would be
// logged in the browser's console, and the page knows better.
function listed(st, name) {
  return Array.isArray(st.files) && st.files.includes(name);
}

// runResult is the run's result.json (GET /v1/runs/{id}/result), or null
// when it has none: not in its files (a search, a run that failed before
// the engine gave one), 404, or 409 (not finished yet).
export async function runResult(st) {
  if (!listed(st, 'result.json')) return null;
  try {
    return await api(`/v1/runs/${enc(st.id)}/result`);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 409)) return null;
    throw err;
  }
}

// fileText is a run file's text, null when the run has no such file.
async function fileText(st, name) {
  if (!listed(st, name)) return null;
  try {
    return await text(`/v1/runs/${enc(st.id)}/files/${enc(name)}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

// spectrum is the run's latency spectrum as [{p, ms}], p ascending: from
// latency_spectrum.txt (every percentile the record holds), or, for a run
// without that file, from result's percentiles (answered samples where it
// has them). null when neither has one. Both pages draw this one.
export async function spectrum(st, result) {
  const txt = await fileText(st, 'latency_spectrum.txt');
  if (txt !== null) {
    const rows = parseSpectrum(txt);
    if (rows.length) return rows;
  }
  const stats = result && (result.sample_latency_answered || result.sample_latency);
  if (!stats || !Array.isArray(stats.percentiles) || !stats.percentiles.length) return null;
  return stats.percentiles.map((e) => ({ p: e.p, ms: e.latency_ns / 1e6 }));
}

// parseSpectrum reads latency_spectrum.txt's detailed spectrum (pkg/runlog
// WriteSpectrum: "Value(ms) Percentile TotalCount 1/(1-Percentile)" rows
// after "Detailed percentile spectrum:", up to the "#[Mean" line) into
// {p, ms} rows; [] when no sample completed.
export function parseSpectrum(txt) {
  const rows = [];
  let inside = false;
  for (const raw of txt.split('\n')) {
    const line = raw.trim();
    if (line === 'Detailed percentile spectrum:') { inside = true; continue; }
    if (!inside || line === '' || line.startsWith('Value')) continue;
    if (line.startsWith('#')) break;
    const [v, p] = line.split(/\s+/).map(Number);
    if (Number.isFinite(v) && Number.isFinite(p)) rows.push({ p, ms: v });
  }
  return rows;
}

// nines turns a percentile into its "number of nines" (90% → 1, 99% → 2,
// 99.9% → 3), the spectrum's usual axis: the tail gets the room. The
// spectrum's p = 1 (the maximum) has none: left out.
export function spectrumSeries(rows) {
  const r = rows.filter((row) => row.p < 1);
  return { x: r.map((row) => -Math.log10(1 - row.p)), y: r.map((row) => row.ms) };
}

const nsToMs = (v) => (v === null || v === undefined ? null : v / 1e6);

// timeseries is the run's timeseries.json as columns for charts:
// {x: [seconds from the run's start], issued, completed, failed, p50_ms,
// p99_ms, lateness_p99_ms, stages: [{stage, start_s, end_s}]}; a
// percentile is null in a second without completions. null when the run
// has no such file.
export async function timeseries(st) {
  const txt = await fileText(st, 'timeseries.json');
  if (txt === null) return null;
  const doc = JSON.parse(txt);
  const step = (doc.interval_ns || 1e9) / 1e9;
  const secs = doc.seconds || [];
  const col = (f) => secs.map(f);
  return {
    x: col((s) => s.second * step),
    issued: col((s) => s.issued / step),
    completed: col((s) => s.completed / step),
    failed: col((s) => s.failed / step),
    p50_ms: col((s) => nsToMs(s.p50_ns)),
    p99_ms: col((s) => nsToMs(s.p99_ns)),
    lateness_p99_ms: col((s) => nsToMs(s.lateness_p99_ns)),
    stages: (doc.stages || []).map((m) => ({ stage: m.stage, start_s: m.start_ns / 1e9, end_s: m.end_ns / 1e9 })),
  };
}

// valueAt resolves a figure's key in result.json: a dotted path, where a
// last segment pNN (p50, p90, p99, p999) under a latency table that has no
// such key names its percentiles[] entry with p = 0.NN (its latency_ns).
// undefined when the path is absent.
export function valueAt(result, key) {
  let v = result;
  const parts = key.split('.');
  for (let i = 0; i < parts.length; i++) {
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    const k = parts[i];
    if (k in v) { v = v[k]; continue; }
    const m = /^p(\d+)$/.exec(k);
    if (!m || !Array.isArray(v.percentiles)) return undefined;
    const p = Number('0.' + m[1]);
    const hit = v.percentiles.find((e) => Math.abs(e.p - p) < 1e-9);
    v = hit ? hit.latency_ns : undefined;
  }
  return v;
}

// Formatting of figures. The browser tests format result.json the same
// way (pkg/daemon/console_runs_test.go): keep the two in step.
//   count: integer, en-US grouping; rate: ≤ 2 decimals, grouping;
//   ns → ms with 2 decimals; ns → s with 2 decimals; text as is.
const FORMATS = {
  count: (v) => Number(v).toLocaleString('en-US', { maximumFractionDigits: 0 }),
  rate: (v) => Number(v).toLocaleString('en-US', { maximumFractionDigits: 2 }),
  ms: (v) => (Number(v) / 1e6).toFixed(2),
  s: (v) => (Number(v) / 1e9).toFixed(2),
  text: (v) => String(v),
};
const UNITS = { count: '', rate: '', ms: 'ms', s: 's', text: '' };

// formatFigure is a figure's shown text (value and unit), '–' when absent.
export function formatFigure(f) {
  if (f.value === undefined || f.value === null) return '–';
  return f.unit ? `${f.text} ${f.unit}` : f.text;
}

// headline is the row of result.json's metric: a rate for Server and
// Offline, a latency in ns for SingleStream and MultiStream (a
// percentile, or early stopping's estimate of it), samples per query for
// a legacy MultiStream. Its row key (the fourth entry) carries the unit:
// on the compare page a rate and a latency never share a row.
function headline(metric) {
  const unit = metric.unit || 'samples/s';
  if (unit === 'ns') {
    const name = (metric.name || 'Latency').replace(/\s*\(ns\)$/, '');
    return ['metric.value', `${name.charAt(0).toUpperCase()}${name.slice(1)}`, 'ms', 'metric.value@ns'];
  }
  return ['metric.value', `Rate achieved (${unit})`, 'rate', 'metric.value@' + unit];
}

// The headline rows: [key, label, format, row]: row (the key when absent)
// names the row on the compare page. Latency rows use the answered
// table (failed samples have no latency) when result.json has one.
function rows(result) {
  const lat = result.sample_latency_answered ? 'sample_latency_answered' : 'sample_latency';
  const latLabel = result.sample_latency_answered ? ' (answered)' : '';
  const metric = result.metric || {};
  const out = [
    ['result_validity', 'Verdict', 'text'],
    ['scenario', 'Scenario', 'text'],
    ['samples_issued', 'Samples issued', 'count'],
    ['samples_completed', 'Samples completed', 'count'],
    ['samples_failed', 'Samples failed', 'count'],
  ];
  if (result.target_qps) out.push(['target_qps', 'Rate asked (QPS)', 'rate']);
  out.push(headline(metric));
  for (const p of ['p50', 'p90', 'p99']) out.push([`${lat}.${p}`, `Latency ${p}${latLabel}`, 'ms']);
  out.push([`${lat}.max_ns`, `Latency max${latLabel}`, 'ms']);
  out.push(['issue_lateness.p99', 'Issue lateness p99', 'ms']);
  if (result.tokens) {
    for (const [m, name] of [['ttft_ns', 'TTFT'], ['tpot_ns', 'TPOT']]) {
      for (const p of ['p50', 'p99']) out.push([`tokens.${m}.${p}`, `${name} ${p}`, 'ms']);
    }
    out.push(['tokens.output_tokens_per_second', 'Output tokens/s', 'rate']);
  }
  out.push(['duration_ns', 'Duration', 's']);
  return out;
}

// figures are the run's headline figures: [{key, row, label, value,
// unit, text}], key a dotted path into result.json (valueAt), row the
// figure's identity across runs (the key, but for the headline metric,
// whose row names its unit), value the raw
// value found there (ns for latencies and durations), text the value
// formatted in unit (ms, s, or '' for counts, rates and words). Without a
// result (a run that failed or was cancelled before the engine gave one)
// they are the state and why, from status.
export function figures(status, result) {
  if (!result) {
    const out = [{ key: 'state', row: 'state', label: 'State', value: status.state, unit: '', text: String(status.state) }];
    if (status.end_reason) out.push({ key: 'end_reason', row: 'end_reason', label: 'End reason', value: status.end_reason, unit: '', text: status.end_reason });
    return out;
  }
  return rows(result).map(([key, label, fmt, row]) => {
    const value = valueAt(result, key);
    const absent = value === undefined || value === null;
    return { key, row: row || key, label, value: absent ? null : value, unit: absent ? '' : UNITS[fmt], text: absent ? '–' : FORMATS[fmt](value) };
  });
}
