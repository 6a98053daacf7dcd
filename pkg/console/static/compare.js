// The compare page: runs picked from the ended ones (their ids kept in the
// URL, ?ids=a,b, so a comparison is a link), their figures side by side
// and their per-second series and latency spectra overlaid, one series
// per run. Everything comes from the public API: GET /v1/runs, a run's
// status, result and files.
import { api, el, when } from './lib.js';
import { lineChart } from './chart.js';
import { runResult, timeseries, spectrum, spectrumSeries, figures, formatFigure } from './rundata.js';

const ENDED = 'done,failed,cancelled,interrupted';
const PAGE = 20;
// MAX_PICKED bounds a comparison: each run is four fetches and a series
// per chart, and more lines than colours read as noise.
const MAX_PICKED = 7;

let picked = [];
let pager, out;

export async function render(main, { query }) {
  picked = [...new Set((query.get('ids') || '').split(',').map((s) => s.trim()).filter(Boolean))].slice(0, MAX_PICKED);
  pager = { tokens: [''], at: 0, model: '', verdict: '' };
  const list = el('div', { id: 'pick' });
  out = el('section', { id: 'comparison', 'aria-live': 'polite', 'aria-labelledby': 'comparison-title' });
  main.replaceChildren(el('h1', {}, 'Compare runs'),
    el('p', { class: 'muted' }, `Pick up to ${MAX_PICKED} ended runs: their figures side by side, their plots overlaid. The link of this page keeps the runs picked.`),
    filters(list), list, out);
  await Promise.all([showPage(list), compare()]);
}

// shortID is the label of a run in a legend or a column: the random
// suffix of its id (the id's time is in the started column).
export function shortID(id) {
  const i = id.lastIndexOf('-');
  return i >= 0 && i < id.length - 1 ? id.slice(i + 1, i + 9) : id;
}

function runLabel(st) {
  const s = st.spec || {};
  return `${shortID(st.id)} ${s.scenario || 'Server'}/${s.model || '?'}`;
}

// filters narrow the list by model and verdict (GET /v1/runs' filters);
// the runs picked stay picked.
function filters(list) {
  const model = el('input', { id: 'pick-model', type: 'search', autocomplete: 'off', spellcheck: 'false' });
  const verdict = el('select', { id: 'pick-verdict' }, ['', 'VALID', 'INVALID', 'none'].map((v) => el('option', { value: v }, v || 'any')));
  const apply = (ev) => {
    ev.preventDefault();
    pager = { tokens: [''], at: 0, model: model.value.trim(), verdict: verdict.value };
    showPage(list);
  };
  return el('form', { class: 'actions pick-filters', role: 'search', onsubmit: apply },
    el('label', { for: 'pick-model' }, 'Model'), model,
    el('label', { for: 'pick-verdict' }, 'Verdict'), verdict,
    el('button', { type: 'submit', class: 'secondary' }, 'Filter'));
}

async function showPage(list) {
  let page;
  try {
    const q = new URLSearchParams({ state: ENDED, limit: String(PAGE) });
    if (pager.model) q.set('model', pager.model);
    if (pager.verdict) q.set('verdict', pager.verdict);
    if (pager.tokens[pager.at]) q.set('page_token', pager.tokens[pager.at]);
    page = await api('/v1/runs?' + q);
  } catch (err) {
    list.replaceChildren(el('p', { class: 'error', role: 'alert' }, 'Listing runs: ' + (err.field ? err.field + ': ' : '') + err.message));
    return;
  }
  pager.tokens[pager.at + 1] = page.next_page_token || '';
  const runs = page.runs || [];
  const rows = runs.map((st) => pickRow(st));
  const prev = el('button', { type: 'button', class: 'secondary', id: 'pick-prev', disabled: pager.at === 0,
    onclick: () => { pager.at--; showPage(list); } }, 'Newer');
  const next = el('button', { type: 'button', class: 'secondary', id: 'pick-next', disabled: !page.next_page_token,
    onclick: () => { pager.at++; showPage(list); } }, 'Older');
  list.replaceChildren(
    el('h2', {}, 'Ended runs'),
    runs.length === 0 ? el('p', { class: 'muted' }, pager.model || pager.verdict ? 'No ended run matches.' : 'No ended run yet.') : el('div', { class: 'table-wrap' }, el('table', { class: 'pick-list', id: 'pick-list' },
      el('thead', {}, el('tr', {}, el('th', {}, el('span', { class: 'skip' }, 'Pick')), el('th', {}, 'Run'), el('th', {}, 'State'),
        el('th', {}, 'Verdict'), el('th', {}, 'Target'), el('th', {}, 'Started'))),
      el('tbody', {}, rows))),
    el('div', { class: 'actions' }, prev, next));
}

function pickRow(st) {
  const id = 'pick-' + st.id;
  const box = el('input', { type: 'checkbox', id, value: st.id, checked: picked.includes(st.id), onchange: (ev) => toggle(st.id, ev.target) });
  return el('tr', { 'data-run-id': st.id },
    el('td', {}, box),
    el('td', {}, el('label', { for: id }, runLabel(st))),
    el('td', {}, st.state),
    el('td', { class: st.validity ? 'verdict-' + st.validity : '' }, st.validity || '–'),
    el('td', {}, (st.spec && st.spec.target) || ''),
    el('td', {}, when(st.started_at)));
}

function toggle(id, box) {
  if (box.checked && !picked.includes(id)) {
    if (picked.length >= MAX_PICKED) {
      box.checked = false;
      out.prepend(el('p', { class: 'error', role: 'alert' }, `At most ${MAX_PICKED} runs at once: unpick one first.`));
      return;
    }
    picked.push(id);
  } else if (!box.checked) {
    picked = picked.filter((p) => p !== id);
  }
  const url = new URL(location.href);
  if (picked.length) url.searchParams.set('ids', picked.join(','));
  else url.searchParams.delete('ids');
  history.replaceState(null, '', url);
  compare();
}

// load is one run's status, result, per-second series and spectrum; a file
// a run lacks is null (a failed run has no result), an unknown id an error.
async function load(id) {
  const enc = encodeURIComponent(id);
  const status = await api(`/v1/runs/${enc}`);
  const ended = ['done', 'failed', 'cancelled', 'interrupted'].includes(status.state);
  if (!ended) return { id, status, result: null, ts: null, spectrum: null };
  const [result, ts] = await Promise.all([runResult(status), timeseries(status)]);
  return { id, status, result, ts, spectrum: await spectrum(status, result) };
}

let comparing = 0;

async function compare() {
  const n = ++comparing;
  if (picked.length === 0) {
    out.replaceChildren(el('h2', { id: 'comparison-title' }, 'Comparison'), el('p', { class: 'muted' }, 'Pick runs above to compare them.'));
    return;
  }
  out.replaceChildren(el('h2', { id: 'comparison-title' }, 'Comparison'), el('p', { class: 'muted' }, 'Loading…'));
  const runs = await Promise.all(picked.map((id) => load(id).catch((err) => ({ id, error: err }))));
  if (n !== comparing) return;
  const bad = runs.filter((r) => r.error);
  const good = runs.filter((r) => !r.error);
  out.replaceChildren(el('h2', { id: 'comparison-title' }, 'Comparison'),
    ...bad.map((r) => el('p', { class: 'error', role: 'alert' }, `${r.id}: ${r.error.message}`)));
  if (!good.length) return;
  out.append(figuresTable(good));
  const charts = el('div', { class: 'compare-charts' });
  out.append(el('h2', {}, 'Plots'), charts);
  plots(charts, good);
}

// figuresTable: rows are figures (by their row: a SingleStream run's
// headline latency and a Server run's rate are two rows), columns runs; a
// figure a run lacks is –.
function figuresTable(runs) {
  const per = runs.map((r) => new Map(figures(r.status, r.result).map((f) => [f.row, f])));
  const keys = [];
  const labels = new Map();
  for (const m of per) {
    for (const [k, f] of m) if (!labels.has(k)) { keys.push(k); labels.set(k, f.label); }
  }
  return el('div', { class: 'table-wrap' }, el('table', { id: 'compare-figures', class: 'compare-figures' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Figure'), runs.map((r) =>
      el('th', { scope: 'col', 'data-run-id': r.id }, el('a', { href: '/ui/runs/' + encodeURIComponent(r.id) }, runLabel(r.status)))))),
    el('tbody', {}, keys.map((k) => el('tr', { 'data-key': k }, el('th', { scope: 'row' }, labels.get(k)),
      per.map((m, i) => el('td', { 'data-run-id': runs[i].id }, m.has(k) ? formatFigure(m.get(k)) : '–')))))));
}

function plots(charts, runs) {
  const withTs = runs.filter((r) => r.ts && r.ts.x.length);
  const defs = [
    ['Latency p99 per second', 'ms', withTs, (r) => ({ x: r.ts.x, y: r.ts.p99_ms })],
    ['Throughput (completed per second)', 'samples/s', withTs, (r) => ({ x: r.ts.x, y: r.ts.completed })],
    ['Issue lateness p99 per second', 'ms', withTs, (r) => ({ x: r.ts.x, y: r.ts.lateness_p99_ms })],
  ];
  for (const [title, yLabel, rs, series] of defs) chart(charts, title, 's', yLabel, rs, series);
  const withSp = runs.filter((r) => r.spectrum && r.spectrum.length);
  chart(charts, 'Latency spectrum', 'nines (1 = p90, 2 = p99, 3 = p99.9)', 'ms', withSp, (r) => spectrumSeries(r.spectrum));
}

function chart(charts, title, xLabel, yLabel, runs, series) {
  const box = el('div', { class: 'compare-chart', 'data-chart': title, 'data-runs': runs.map((r) => r.id).join(',') });
  charts.append(box);
  if (!runs.length) {
    box.append(el('h3', {}, title), el('p', { class: 'muted' }, 'None of these runs has this record.'));
    return;
  }
  lineChart(box, { title, xLabel, yLabel, series: runs.map((r) => Object.assign({ label: runLabel(r.status) }, series(r))) });
}
