// A run's page (/ui/runs/{id}). While the run is queued or running it is
// live from the run's event stream (GET /v1/runs/{id}/events): progress,
// per-second figures and growing charts, and a Cancel button. Once it has
// ended: the verdict and why, the figures (rundata.figures, the same rows
// as the compare page), the report's plots from the run's files, its
// trials (a search or sweep) and every file to download.
import { api, events, download, el, ms, num, when, duration, showError } from './lib.js';
import { lineChart } from './chart.js';
import { runResult, timeseries, spectrum, spectrumSeries, figures, formatFigure } from './rundata.js';

const enc = encodeURIComponent;
const TERMINAL = new Set(['done', 'failed', 'cancelled', 'interrupted']);

export async function render(main, { params }) {
  const id = params[0];
  const st = await api(`/v1/runs/${enc(id)}`);
  const page = { id, main, st };
  main.replaceChildren(el('h1', {}, 'Run ', el('code', {}, id)), summary(st), el('div', { id: 'run-body' }));
  if (TERMINAL.has(st.state)) await showEnded(page);
  else showLive(page);
}

// summary: what was asked, and the state (updated live).
function summary(st) {
  const s = st.spec || {};
  const row = (k, v, attrs) => [el('dt', {}, k), el('dd', attrs || {}, v)];
  return el('dl', { class: 'run-summary' },
    row('State', st.state, { id: 'state', class: 'state-' + st.state }),
    row('Scenario', (s.scenario || '–') + (s.search && s.search.mode ? ` (${s.search.mode})` : '')),
    row('Model', s.model || '–'), row('Target', s.target || '–'),
    row('Submitted', when(st.created_at)), row('Started', when(st.started_at), { id: 'started' }),
    row('Ended', when(st.ended_at), { id: 'ended' }));
}

function setState(page, state) {
  const e = document.getElementById('state');
  if (e) { e.textContent = state; e.className = 'state-' + state; }
  page.st.state = state;
}

// ---- live ----

// LIVE are the progress figures shown while the run goes: [label, f(p)].
const LIVE = [
  ['Issued (queries)', (p) => num(p.issued, 0)],
  ['Completed (queries)', (p) => num(p.completed, 0)],
  ['In flight', (p) => num(p.in_flight, 0)],
  ['Failed (samples)', (p) => num(p.failed, 0)],
  ['Over the latency bound', (p) => num(p.over_latency, 0)],
  ['Elapsed / expected', (p) => `${num(p.elapsed_s, 1)} / ${num(p.expected_end_s, 1)} s`],
  ['Throughput (completed/s)', (p) => num(p.current_qps, 1)],
  ['Latency p50 (run so far)', (p) => ms(p.p50_ms)],
  ['Latency p99 (run so far)', (p) => ms(p.p99_ms)],
  ['Latency p99 (last second)', (p) => (p.recent && p.recent.samples ? ms(p.recent.p99_ms) : '–')],
  ['Max issue lateness', (p) => ms(p.max_issue_lateness_ms)],
];

function showLive(page) {
  const body = document.getElementById('run-body');
  const bar = el('progress', { id: 'run-progress', max: 1, value: 0, 'aria-labelledby': 'progress-label' });
  const cards = LIVE.map(([label]) => el('div', { class: 'card' }, el('div', { class: 'muted' }, label), el('div', { class: 'v', 'data-live': label }, '–')));
  const queued = el('p', { id: 'queue-position', role: 'status' });
  const searchTrial = el('p', { id: 'search-trial', role: 'status', hidden: true });
  const charts = el('div', { id: 'live-charts' });
  const liveTokens = tokenCards();
  const liveFailures = failureKinds();
  const cancel = el('button', { type: 'button', id: 'cancel', class: 'danger', onclick: () => cancelRun(page, cancel) }, 'Cancel run');
  const msg = el('p', { id: 'cancel-status', role: 'status' });
  body.replaceChildren(el('div', { class: 'actions' }, cancel, msg), queued,
    el('h2', { id: 'progress-label' }, 'Progress'), searchTrial, bar, el('div', { class: 'cards', id: 'live' }, cards),
    liveTokens.box, liveFailures.box,
    el('p', { class: 'muted' }, 'The failures’ first messages and the report’s plots are shown once the run ends.'), charts);
  page.live = { bar, cards, queued, searchTrial, charts, tokens: liveTokens, failures: liveFailures, t: [], el: [], done: [], qps: [], p50: [], p99: [], late: [], failed: [] };
  if (page.st.state === 'queued') queued.textContent = `Queued: ${page.st.queue_position ?? 0} run(s) ahead of it.`;
  if (page.st.progress) onProgress(page, page.st.progress);
  page.abort = new AbortController();
  follow(page);
}

// follow reads the event stream until the run ends, then shows the ended
// page. A stream that ends or breaks before the run has (the daemon
// restarting, a stream it dropped, 503 at its limit of streams) is read
// again after a pause that grows to 10 s, the run's status read between
// so a run that ended meanwhile is shown ended.
async function follow(page) {
  let pause = 1000;
  for (;;) {
    let broke = null;
    try {
      await events(`/v1/runs/${enc(page.id)}/events`, (event, data) => {
        pause = 1000; // the stream works
        if (event === 'progress' && data) onProgress(page, data);
        else if (event === 'state' && data) {
          setState(page, data.state);
          if (data.state === 'running' && data.at) document.getElementById('started').textContent = when(data.at);
        }
      }, page.abort.signal);
    } catch (err) {
      if (page.abort.signal.aborted) return;
      broke = err;
    }
    try {
      page.st = await api(`/v1/runs/${enc(page.id)}`);
    } catch (err) {
      if (page.abort.signal.aborted) return;
      broke = err;
    }
    if (page.st && TERMINAL.has(page.st.state)) break;
    page.live.queued.textContent = broke ? `Lost the run's event stream (${broke.message}); trying again…` : '';
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 10000);
  }
  const st = page.st;
  setState(page, st.state);
  document.getElementById('ended').textContent = when(st.ended_at);
  try {
    await showEnded(page);
  } catch (err) {
    showError(page.live.queued, err);
  }
}

function onProgress(page, p) {
  const L = page.live;
  L.queued.textContent = '';
  // A search's trial, and a scout search's stage: short or full length.
  L.searchTrial.textContent = searchTrialText(p);
  L.searchTrial.hidden = !L.searchTrial.textContent;
  L.cards.forEach((card, i) => { card.querySelector('[data-live]').textContent = LIVE[i][1](p); });
  const frac = p.planned_queries > 0 ? p.issued / p.planned_queries : (p.expected_end_s > 0 ? p.elapsed_s / p.expected_end_s : 0);
  L.bar.value = Math.max(0, Math.min(1, frac));
  L.bar.dataset.issued = String(p.issued);
  L.bar.textContent = `${Math.round(L.bar.value * 100)}%`;
  // One point a second: the stream sends two; the later one of a second
  // wins. Throughput is the completions since the previous second's
  // point; latency is the last second's (progress.recent).
  const t = Math.floor(p.elapsed_s);
  if (L.t.length && L.t[L.t.length - 1] === t) for (const k of ['t', 'el', 'done', 'qps', 'p50', 'p99', 'late', 'failed']) L[k].pop();
  const n = L.t.length;
  const qps = n ? (p.completed_samples - L.done[n - 1]) / Math.max(p.elapsed_s - L.el[n - 1], 1e-3) : p.current_qps;
  const r = p.recent;
  L.t.push(t); L.el.push(p.elapsed_s); L.done.push(p.completed_samples); L.qps.push(qps);
  L.p50.push(r && r.samples ? r.p50_ms : null); L.p99.push(r && r.samples ? r.p99_ms : null);
  L.late.push(p.max_issue_lateness_ms); L.failed.push(p.failed);
  L.tokens.show(p.tokens);
  L.failures.show(p.failures);
  drawLive(L);
}

// TOKENS are a generative run's live token figures (progress.tokens):
// [key, label, f(tokens)]; each card's data-live is its key.
const TOKENS = [
  ['ttft_p50_ms', 'TTFT p50', (k) => ms(k.ttft_p50_ms)],
  ['ttft_p99_ms', 'TTFT p99', (k) => ms(k.ttft_p99_ms)],
  ['tpot_p50_ms', 'TPOT p50', (k) => ms(k.tpot_p50_ms)],
  ['tpot_p99_ms', 'TPOT p99', (k) => ms(k.tpot_p99_ms)],
  ['output_tokens_per_second', 'Output tokens/s (run so far)', (k) => num(k.output_tokens_per_second, 1)],
  ['output_tokens', 'Output tokens', (k) => num(k.output_tokens, 0)],
];

// tokenCards: the token figures, hidden until the stream carries them
// (only a generative run's progress does, once a sample has answered).
function tokenCards() {
  const values = TOKENS.map(([key]) => el('div', { class: 'v', 'data-live': key }, '–'));
  const box = el('section', { id: 'live-tokens', hidden: '' }, el('h2', {}, 'Tokens'),
    el('div', { class: 'cards' }, TOKENS.map(([, label], i) => el('div', { class: 'card' }, el('div', { class: 'muted' }, label), values[i]))),
    el('p', { class: 'muted' }, 'Percentiles so far, from histograms (within 0.1%); the result’s are exact.'));
  return {
    box,
    show(k) {
      if (!k) return;
      box.hidden = false;
      values.forEach((v, i) => { v.textContent = TOKENS[i][2](k); });
    },
  };
}

// failureKinds: the failed samples so far by kind (progress.failures,
// result.json's kinds without their messages), hidden until one fails.
function failureKinds() {
  const tbody = el('tbody', {});
  const box = el('section', { id: 'live-failures', hidden: '' }, el('h2', {}, 'Failures by kind (so far)'),
    el('div', { class: 'table-wrap' }, el('table', { id: 'live-failures-table' },
      el('thead', {}, el('tr', {}, ['Outcome', 'Status', 'Count'].map((h) => el('th', { scope: 'col' }, h)))), tbody)));
  return {
    box,
    show(fs) {
      if (!fs || !fs.length) return;
      box.hidden = false;
      tbody.replaceChildren(...fs.map((f) => el('tr', { 'data-failure': f.outcome, 'data-status': f.status || '' },
        el('td', {}, f.outcome), el('td', {}, f.status || '–'), el('td', { class: 'count' }, num(f.count, 0)))));
    },
  };
}

function drawLive(L) {
  const x = L.t;
  const specs = [
    ['Throughput', 'completed/s', [{ label: 'completed/s', x, y: L.qps }]],
    ['Latency per second', 'ms', [{ label: 'p50', x, y: L.p50 }, { label: 'p99', x, y: L.p99 }]],
    ['Issue lateness (max so far)', 'ms', [{ label: 'max lateness', x, y: L.late }]],
    ['Failed samples (so far)', 'samples', [{ label: 'failed', x, y: L.failed }]],
  ];
  if (!L.plots) {
    L.plots = specs.map(([title, yLabel, series]) => lineChart(L.charts, { title, xLabel: 'elapsed s', yLabel, series, height: 200 }));
    return;
  }
  specs.forEach(([, , series], i) => L.plots[i].setData([x, ...series.map((s) => s.y)]));
}

async function cancelRun(page, button) {
  button.disabled = true;
  const msg = document.getElementById('cancel-status');
  msg.textContent = 'Cancelling…';
  try {
    const st = await api(`/v1/runs/${enc(page.id)}/cancel`, {});
    msg.textContent = st && st.state ? `Cancel asked; the run is ${st.state}.` : 'Cancel asked.';
  } catch (err) {
    button.disabled = false;
    msg.textContent = 'Cancel failed: ' + err.message;
  }
}

// ---- ended ----

async function showEnded(page) {
  const { st } = page;
  const body = document.getElementById('run-body');
  const [result, ts] = await Promise.all([runResult(st), timeseries(st).catch(() => null)]);
  const sp = await spectrum(st, result).catch(() => null);
  const verdict = st.validity || st.state;
  // Sections a run lacks are null: left out (replaceChildren would show
  // them as text).
  body.replaceChildren(...[
    el('h2', {}, 'Verdict'),
    el('p', { class: 'verdict' }, el('span', { id: 'verdict', class: 'verdict-' + verdict }, verdict)),
    endNote(st), why(st),
    el('h2', {}, 'Figures'), figureCards(st, result),
    failuresTable(st.failures),
    plots(sp, ts), trials(st), files(st)].filter(Boolean));
}

// endNote says plainly how a run that did not finish ended.
function endNote(st) {
  if (st.state === 'done') return el('p', { class: 'muted' }, `Ended: ${st.end_reason || 'completed'}, after ${duration(st.started_at, st.ended_at)}.`);
  const text = { failed: 'This run failed.', cancelled: 'This run was cancelled.', interrupted: 'This run was interrupted: the daemon stopped while it went.' }[st.state] || `This run is ${st.state}.`;
  return el('p', { class: 'banner banner-' + st.state, id: 'end-note', role: 'status' }, text,
    st.end_reason ? ` End reason: ${st.end_reason}.` : '');
}

function why(st) {
  const parts = [];
  const list = (title, items, cls) => items && items.length && parts.push(el('h3', {}, title), el('ul', { class: cls }, items.map((s) => el('li', {}, s))));
  if (st.error) parts.push(el('p', { class: 'error', id: 'run-error' }, 'Error: ', st.error));
  list('Why INVALID', st.invalid_reasons, 'error');
  list('Warnings', st.warnings, 'warn');
  return el('div', { id: 'why' }, parts);
}

function figureCards(st, result) {
  return el('div', { class: 'cards', id: 'figures' }, figures(st, result).map((f) =>
    el('div', { class: 'card' }, el('div', { class: 'muted' }, f.label), el('div', { class: 'v', 'data-figure': f.key }, formatFigure(f)))));
}

function failuresTable(failures) {
  if (!failures || !failures.length) return null;
  return el('section', {}, el('h2', {}, 'Failures by kind'), el('div', { class: 'table-wrap' }, el('table', { id: 'failures' },
    el('thead', {}, el('tr', {}, ['Outcome', 'Status', 'Count', 'First message'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, failures.map((f) => el('tr', {}, el('td', {}, f.outcome), el('td', {}, f.status || '–'), el('td', {}, num(f.count, 0)), el('td', {}, f.example || '')))))));
}

// plots: the latency spectrum (rundata.spectrum: latency_spectrum.txt,
// else result.json's percentiles), and the time series from
// timeseries.json.
function plots(sp, ts) {
  const box = el('section', { id: 'plots' }, el('h2', {}, 'Plots'));
  const later = [];
  const marks = [];
  if (sp && sp.length) {
    // x in nines: 1 is p90, 2 p99, 3 p99.9 (the tail spread out).
    later.push(() => lineChart(box, { title: 'Latency spectrum', xLabel: 'nines (1 = p90, 2 = p99, 3 = p99.9)', yLabel: 'ms',
      series: [Object.assign({ label: 'latency' }, spectrumSeries(sp))] }));
  }
  if (ts && ts.x.length) {
    const x = ts.x;
    // uPlot sizes its scales after its constructor returns (a position is
    // NaN until then): the marks go on every chart at once, a turn later.
    const marked = (opts) => () => {
      const u = lineChart(box, opts);
      if (ts.stages.length > 1) marks.push(u);
    };
    later.push(marked({ title: 'Throughput per second', yLabel: 'per s', series: [{ label: 'issued', x, y: ts.issued }, { label: 'completed', x, y: ts.completed }] }));
    later.push(marked({ title: 'Latency per second', yLabel: 'ms', series: [{ label: 'p50', x, y: ts.p50_ms }, { label: 'p99', x, y: ts.p99_ms }] }));
    later.push(marked({ title: 'Issue lateness p99 per second', yLabel: 'ms', series: [{ label: 'lateness p99', x, y: ts.lateness_p99_ms }] }));
    later.push(marked({ title: 'Failures per second', yLabel: 'per s', series: [{ label: 'failed', x, y: ts.failed }] }));
    if (ts.stages.length) {
      later.push(() => box.append(el('p', { class: 'muted', id: 'stages' }, 'Stages: ',
        ts.stages.map((m) => `${m.stage}: ${num(m.start_s, 1)}–${num(m.end_s, 1)} s`).join('; '))));
    }
  }
  if (!later.length) box.append(el('p', { class: 'muted' }, 'This run has no result or time series to plot.'));
  // Charts size to their container: draw once the section is in the page.
  queueMicrotask(() => {
    later.forEach((f) => f());
    if (marks.length) setTimeout(() => marks.forEach((u) => stageMarks(u, ts.stages)), 0);
  });
  return box;
}

// stageMarks draws a load shape's stage starts on a time chart: a line
// in the chart's overlay at each start after the first (positions set
// from script: the CSP allows no style attribute in markup).
function stageMarks(u, stages) {
  for (const m of stages.slice(1)) {
    const left = u.valToPos(m.start_s, 'x');
    if (!Number.isFinite(left)) continue;
    const mark = el('div', { class: 'stage-mark', 'data-stage': m.stage, title: `stage ${m.stage} starts at ${num(m.start_s, 1)} s` });
    mark.style.left = left + 'px';
    u.over.append(mark);
  }
}

// A trial's tail latency is -1 (status) or LoadGen's INT64_MAX ns
// (search.json: 9223372036854.775 ms) where its percentile lands on a
// failed sample: no latency to show or plot.
const FAILED_TAIL_MS = 9e12;
export function trialTail(t) {
  const v = t.tail_latency_answered_ms ?? t.tail_latency_ms;
  return typeof v === 'number' && v >= 0 && v < FAILED_TAIL_MS ? v : null;
}

// The files a trial's row offers: its result and LoadGen's summary, from
// GET /v1/runs/{id}/trials/{index}/files/{name} (a trial has no page of
// its own: its run_id is no run of the history).
const TRIAL_FILES = ['result.json', 'mlperf_log_summary.txt'];

function trialFiles(st, t) {
  return TRIAL_FILES.map((n) => el('button', { type: 'button', class: 'secondary', 'data-trial-file': n,
    'aria-label': `trial ${t.index} ${n}`, onclick: getter(`/v1/runs/${enc(st.id)}/trials/${t.index}/files/${enc(n)}`, `${st.id}-trial-${t.index}-${n}`) }, n));
}

// trialKind is a trial's series in the trials plots: its phase, and in a
// scout search "scout <phase>" for a short trial (a full-length one's
// phase is verify), as search_summary.txt names them.
const trialKind = (t) => (t.stage === 'scout' ? 'scout ' : '') + (t.phase || 'trial');

// searchTrialText is the live line of a search's run: the trial running
// and, in a scout search, its stage (progress.search_trial); '' for a run
// that is no search.
export function searchTrialText(p) {
  const s = p && p.search_trial;
  if (!s) return '';
  const stage = s.stage === 'scout' ? ', scout: a short trial' : s.stage === 'verify' ? ', verify: a full-length trial' : '';
  return `Search trial ${s.index} (${s.phase || 'trial'}${stage}) at ${num(s.target, 2)}`;
}

// trials: a search's or sweep's trials, as a table and as rate against
// latency at the percentile: points, one series per phase (a scout
// search's short trials apart, hollow), every trial kept (a find-peak's
// verify repeats a target); a failed tail is said, not plotted.
export function trials(st) {
  const ts = st.trials || [];
  if (!ts.length) return null;
  const box = el('section', { id: 'trials' }, el('h2', {}, 'Trials'));
  if (st.search) {
    box.append(el('p', {}, st.search.found ? `Peak: ${num(st.search.peak, 2)} ${st.search.unit} (reported ${num(st.search.reported, 2)}).` : 'No peak found.',
      ' ', st.search.criterion || ''));
  }
  const staged = ts.some((t) => t.stage);
  if (staged && st.search && st.search.stages) {
    box.append(el('p', { id: 'search-stages' }, 'Scout search: ', st.search.stages.map((g) => `${g.stage} ${g.trials} trial(s) in ${num(g.duration_s, 1)} s`).join('; '),
      st.search.full_length_equivalent_s ? ` (at full length, the timed runs of these trials would take ${num(st.search.full_length_equivalent_s, 1)} s).` : '.'));
  }
  const tailText = (t) => (trialTail(t) === null ? (t.verdict ? 'failed' : '–') : ms(trialTail(t)));
  const heads = ['#', 'Phase', ...(staged ? ['Stage'] : []), 'Target', 'Achieved', 'Tail latency', 'Failed samples', 'Verdict', 'Pass', 'Files'];
  box.append(el('div', { class: 'table-wrap' }, el('table', { id: 'trials-table' },
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ts.map((t) => el('tr', { 'data-trial': t.index },
      el('td', {}, String(t.index)),
      el('td', {}, t.phase || '–'),
      ...(staged ? [el('td', { class: 'stage' }, t.stage ? `${t.stage} (${num(t.min_duration_s, 1)} s)` : '–')] : []),
      el('td', {}, num(t.target, 2)), el('td', {}, num(t.achieved, 2)),
      el('td', { class: 'tail' }, tailText(t)), el('td', { class: 'failed' }, num(t.failed_samples, 0)), el('td', { class: 'verdict-' + (t.verdict || '') }, t.verdict || '–'), el('td', {}, t.pass ? 'pass' : 'fail'),
      el('td', { class: 'trial-files' }, t.verdict ? trialFiles(st, t) : '–')))))));
  const kinds = [...new Set(ts.map(trialKind))];
  const byPhase = (f) => kinds.map((k) => {
    const mine = ts.filter((t) => trialKind(t) === k && f(t) !== null);
    return { label: k, x: mine.map((t) => t.target), y: mine.map(f), hollow: k.startsWith('scout ') };
  });
  queueMicrotask(() => {
    lineChart(box, { title: 'Trials: latency at the percentile against rate', xLabel: 'target', yLabel: 'ms', points: true, series: byPhase(trialTail) });
    lineChart(box, { title: 'Trials: achieved against target', xLabel: 'target', yLabel: 'achieved', points: true, series: byPhase((t) => t.achieved) });
  });
  return box;
}

// getter is a button's click: download path as name, the error said
// beside the button.
const getter = (path, name) => async (ev) => {
  const b = ev.currentTarget;
  b.disabled = true;
  try { await download(path, name); } catch (err) { b.after(el('span', { class: 'error', role: 'alert' }, ' ', err.message)); }
  b.disabled = false;
};

// files: every file of the run, each a download (fetch with the token: a
// link could not carry it), and the report.
function files(st) {
  const names = st.files || [];
  const get = getter;
  const base = `/v1/runs/${enc(st.id)}`;
  const items = [];
  // The report is made from the run's result (or a search's record): a
  // run that failed before it has none to offer.
  if (TERMINAL.has(st.state) && names.some((n) => n === 'result.json' || n === 'search.json')) {
    items.push(el('li', {}, el('button', { type: 'button', class: 'secondary', 'data-file': 'report.html', onclick: get(`${base}/report.html`, `${st.id}-report.html`) }, 'report.html'), ' the report, one page'));
  }
  for (const n of names) {
    items.push(el('li', {}, el('button', { type: 'button', class: 'secondary', 'data-file': n, onclick: get(`${base}/files/${enc(n)}`, n) }, n)));
  }
  return el('section', { id: 'files' }, el('h2', {}, 'Files'), items.length ? el('ul', { class: 'files' }, items) : el('p', { class: 'muted' }, 'No files.'));
}
