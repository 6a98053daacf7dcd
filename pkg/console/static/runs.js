// The runs page (/ui/): the queue, then the history newest first, from
// GET /v1/runs. Filters and the page are kept in the page's URL query, so
// a filtered view is a link. While anything is queued or running the page
// polls every 2 s and updates the tables in place, keeping focus.
import { api, el, ms, num, when, duration, showError, ApiError } from './lib.js';

const STATES = ['queued', 'running', 'done', 'failed', 'cancelled', 'interrupted'];
const VERDICTS = ['VALID', 'INVALID'];
const POLL_MS = 2000;
// The URL query the page keeps: the API's GET /v1/runs parameters.
const KEYS = ['state', 'model', 'verdict', 'limit', 'page_token'];

// generation counts renders of the lists: a poll or a fetch started for an
// older view (before a filter changed) drops its answer.
let generation = 0;
let timer = null;

export async function render(main, { query }) {
  const q = new URLSearchParams();
  for (const k of KEYS) if (query.get(k)) q.set(k, query.get(k));
  const status = el('p', { class: 'muted', id: 'runs-status', role: 'status' });
  const queue = el('section', { id: 'queue-section', 'aria-labelledby': 'queue-title' });
  const history = el('section', { 'aria-labelledby': 'history-title' });
  const page = { q, status, queue, history };
  main.replaceChildren(el('h1', {}, 'Runs'), filterForm(page), status, queue, history);
  await load(page);
}

// filterForm: state, model and verdict. Applying one starts from the
// first page again.
function filterForm(page) {
  const { q } = page;
  const state = el('select', { id: 'filter-state', name: 'state' }, el('option', { value: '' }, 'any'),
    STATES.map((s) => el('option', { value: s, selected: q.get('state') === s }, s)));
  const model = el('input', { id: 'filter-model', name: 'model', type: 'text', value: q.get('model') || '', autocomplete: 'off' });
  const verdict = el('select', { id: 'filter-verdict', name: 'verdict' }, el('option', { value: '' }, 'any'),
    VERDICTS.map((v) => el('option', { value: v, selected: q.get('verdict') === v }, v)));
  const err = el('span', { class: 'field-error', id: 'filter-error', role: 'alert' });
  const apply = (ev) => {
    ev.preventDefault();
    for (const [k, input] of [['state', state], ['model', model], ['verdict', verdict]]) {
      const v = input.value.trim();
      if (v) q.set(k, v); else q.delete(k);
    }
    q.delete('page_token');
    navigate(page, true);
  };
  const clear = () => {
    state.value = ''; model.value = ''; verdict.value = '';
    for (const k of ['state', 'model', 'verdict', 'page_token']) q.delete(k);
    navigate(page, true);
  };
  page.filterError = err;
  const field = (id, label, input) => el('span', { class: 'filter' }, el('label', { for: id }, label), ' ', input);
  return el('form', { id: 'runs-filter', class: 'actions filters', role: 'search', 'aria-label': 'Filter runs', onsubmit: apply },
    field('filter-state', 'State', state), field('filter-model', 'Model', model), field('filter-verdict', 'Verdict', verdict),
    el('button', { type: 'submit' }, 'Filter'), el('button', { type: 'button', class: 'secondary', onclick: clear }, 'Clear'), err);
}

// navigate puts the view's query in the URL (a link to this view) and
// loads it.
function navigate(page, push) {
  const qs = page.q.toString();
  const url = location.pathname + (qs ? '?' + qs : '');
  if (push) history.pushState(null, '', url); else history.replaceState(null, '', url);
  load(page).catch((err) => showError(page.history, err));
}

// load fetches the queue and the history page and shows them; it polls
// again while any run shown is queued or running.
async function load(page) {
  const gen = ++generation;
  clearTimeout(timer);
  page.filterError.textContent = '';
  let list, active;
  try {
    [list, active] = await Promise.all([api('/v1/runs?' + page.q.toString()), activeRuns()]);
  } catch (err) {
    if (gen !== generation) return;
    if (err instanceof ApiError && err.field) {
      page.filterError.textContent = `${err.field}: ${err.message}`;
      page.history.replaceChildren();
      return;
    }
    throw err;
  }
  if (gen !== generation) return;
  keepFocus(() => {
    showQueue(page.queue, active);
    showHistory(page, list);
  });
  page.status.textContent = active.length ? `${active.length} run(s) queued or running; updating every 2 s.` : '';
  const live = active.length > 0 || list.runs.some((r) => r.state === 'queued' || r.state === 'running');
  if (live) timer = setTimeout(() => load(page).catch((err) => showError(page.history, err)), POLL_MS);
}

// activeRuns are the running and queued runs, the running first, then
// the queue in order.
async function activeRuns() {
  const list = await api('/v1/runs?state=running,queued&limit=500');
  const pos = (r) => (r.state === 'running' ? -1 : (r.queue_position ?? 0));
  return list.runs.slice().sort((a, b) => pos(a) - pos(b));
}

// keepFocus redraws without losing the keyboard's place: the focused
// control in a redrawn row is found again by its run and its role.
function keepFocus(redraw) {
  const a = document.activeElement;
  const row = a && a.closest && a.closest('tr[data-run-id]');
  const table = row && row.closest('table');
  const key = row && { table: table && table.id, id: row.dataset.runId, tag: a.tagName };
  redraw();
  if (!key) return;
  for (const r of document.querySelectorAll(`#${key.table} tr[data-run-id]`)) {
    if (r.dataset.runId !== key.id) continue;
    const again = r.querySelector(key.tag.toLowerCase());
    if (again) again.focus();
  }
}

function runLink(r) {
  return el('a', { href: '/ui/runs/' + encodeURIComponent(r.id) }, r.id);
}

function showQueue(section, active) {
  if (!active.length) { section.replaceChildren(); return; }
  const rows = active.map((r) => el('tr', { 'data-run-id': r.id },
    el('td', {}, r.state === 'running' ? 'running' : String(r.queue_position ?? 0)),
    el('td', {}, runLink(r)), el('td', {}, r.state), el('td', {}, scenarioOf(r)), el('td', {}, r.spec.model || '–'),
    el('td', {}, when(r.created_at))));
  section.replaceChildren(el('h2', { id: 'queue-title' }, 'Queue'),
    el('div', { class: 'table-wrap' }, el('table', { id: 'queue' },
      el('caption', { class: 'muted' }, 'Position: runs ahead of it (0: it starts next).'),
      el('thead', {}, el('tr', {}, ['Position', 'Run', 'State', 'Scenario', 'Model', 'Submitted'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows))));
}

const HEADS = ['Run', 'State', 'Verdict', 'Scenario', 'Model', 'Target', 'Rate asked / achieved', 'p99', 'Started', 'Duration'];

function showHistory(page, list) {
  const rows = list.runs.map(historyRow);
  const body = rows.length ? rows : [el('tr', {}, el('td', { colspan: HEADS.length, class: 'muted' }, 'No runs match.'))];
  const nav = el('div', { class: 'actions paging' });
  if (page.q.get('page_token')) {
    nav.append(el('button', { type: 'button', id: 'page-first', class: 'secondary', onclick: () => { page.q.delete('page_token'); navigate(page, true); } }, 'First page'));
  }
  if (list.next_page_token) {
    nav.append(el('button', { type: 'button', id: 'page-next', onclick: () => { page.q.set('page_token', list.next_page_token); navigate(page, true); } }, 'Next page'));
  }
  page.history.replaceChildren(el('h2', { id: 'history-title' }, 'History'),
    el('div', { class: 'table-wrap' }, el('table', { id: 'runs' },
      el('caption', { class: 'muted' }, 'Newest first. Rate in queries per second; p99 latency over the answered samples.'),
      el('thead', {}, el('tr', {}, HEADS.map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, body))), nav);
}

function scenarioOf(r) {
  const s = r.spec.scenario || '–';
  return r.spec.search && r.spec.search.mode ? `${s} (${r.spec.search.mode})` : s;
}

// rates: asked is the spec's target_qps (a search: the peak it found);
// achieved is the completed samples over the run's elapsed time, from
// its last progress snapshot.
function rates(r) {
  const s = r.spec.settings || {};
  const asked = r.search && r.search.found ? r.search.peak : s.target_qps;
  const p = r.progress;
  const achieved = p && p.elapsed_s > 0 ? p.completed_samples / p.elapsed_s : null;
  return `${num(asked, 2)} / ${num(achieved, 2)}`;
}

function historyRow(r) {
  const verdict = r.validity || '–';
  const p99 = r.answered_latency_ms ? r.answered_latency_ms.p99 : (r.progress && r.state === 'running' ? r.progress.p99_ms : null);
  const state = r.state === 'queued' && r.queue_position !== undefined ? `queued (${r.queue_position} ahead)` : r.state;
  return el('tr', { 'data-run-id': r.id, 'data-state': r.state },
    el('td', {}, runLink(r)),
    el('td', { class: 'state-' + r.state }, state),
    el('td', { class: 'verdict-' + verdict }, verdict),
    el('td', {}, scenarioOf(r)),
    el('td', {}, r.spec.model || '–'),
    el('td', { class: 'target' }, r.spec.target || '–'),
    el('td', {}, rates(r)),
    el('td', {}, ms(p99)),
    el('td', {}, when(r.started_at)),
    el('td', {}, r.started_at ? duration(r.started_at, r.ended_at) : '–'));
}

// The back button moves between filtered views: show the one the URL
// names (a full load: the page's module state starts afresh).
window.addEventListener('popstate', () => location.reload());
