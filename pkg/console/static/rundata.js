// A run's data as the run page and the compare page show it: its result,
// its per-second record, and its headline figures. Both pages show the
// same rows from the same function, so a figure reads the same on each.
import { api, text, ApiError } from './lib.js';

const enc = encodeURIComponent;

// runResult is the run's result.json (GET /v1/runs/{id}/result), or null
// when it has none: 404 (no result file: a run that failed before the
// engine gave one) or 409 (not finished yet).
export async function runResult(id) {
  try {
    return await api(`/v1/runs/${enc(id)}/result`);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 409)) return null;
    throw err;
  }
}

const nsToMs = (v) => (v === null || v === undefined ? null : v / 1e6);

// timeseries is the run's timeseries.json as columns for charts:
// {x: [seconds from the run's start], issued, completed, failed, p50_ms,
// p99_ms, lateness_p99_ms, stages: [{stage, start_s, end_s}]}; a
// percentile is null in a second without completions. null when the run
// has no such file (404).
export async function timeseries(id) {
  let doc;
  try {
    doc = JSON.parse(await text(`/v1/runs/${enc(id)}/files/timeseries.json`));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
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

// The headline rows: [key, label, format]. Latency rows use the answered
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
  out.push(['metric.value', `Rate achieved (${metric.unit || metric.name || 'samples/s'})`, 'rate']);
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

// figures are the run's headline figures: [{key, label, value, unit,
// text}], key a dotted path into result.json (valueAt), value the raw
// value found there (ns for latencies and durations), text the value
// formatted in unit (ms, s, or '' for counts, rates and words). Without a
// result (a run that failed or was cancelled before the engine gave one)
// they are the state and why, from status.
export function figures(status, result) {
  if (!result) {
    const out = [{ key: 'state', label: 'State', value: status.state, unit: '', text: String(status.state) }];
    if (status.end_reason) out.push({ key: 'end_reason', label: 'End reason', value: status.end_reason, unit: '', text: status.end_reason });
    return out;
  }
  return rows(result).map(([key, label, fmt]) => {
    const value = valueAt(result, key);
    const absent = value === undefined || value === null;
    return { key, label, value: absent ? null : value, unit: absent ? '' : UNITS[fmt], text: absent ? '–' : FORMATS[fmt](value) };
  });
}
