// The runs page (/ui/): the queue, then the history newest first, from
// GET /v1/runs. Filters and the page are kept in the page's URL query, so
// a filtered view is a link. While anything is queued or running the page
// polls every 2 s and updates the tables in place, keeping focus.
import { api, el, ms, num, when, duration, showError, ApiError } from './lib.js';

const STATES = ['queued', 'running', 'done', 'failed', 'cancelled', 'interrupted'];
const VERDICTS = ['VALID', 'INVALID', 'none'];
const SCENARIOS = ['SingleStream', 'MultiStream', 'Server', 'Offline'];
const POLL_MS = 2000;
// The URL query the page keeps: the API's GET /v1/runs parameters.
const KEYS = ['state', 'model', 'verdict', 'scenario', 'limit', 'page_token'];

// generation counts renders of the lists: a poll or a fetch started for an
// older view (before a filter changed) drops its answer.
let generation = 0;
let timer = null;

export async function render(main, { query }) {
  const q = new URLSearchParams();
  for (const k of KEYS) if (query.get(k)) q.set(k, query.get(k));
  const status = el('p', { class: 'muted', id: 'runs-status', role: 'status' });
  const queue = el('section', { id: 'queue-section', 'aria-labelledby': 'queue-title' });
  const hist = el('section', { id: 'history', 'aria-labelledby': 'history-title' });
  const page = { q, status, queue, history: hist };
  main.replaceChildren(el('h1', {}, 'Runs'), filterForm(page), status, queue, hist);
  await load(page);
}

// filterForm: state, model, verdict (none: a run without one) and
// scenario. Applying one starts from the first page again.
function filterForm(page) {
  const { q } = page;
  const state = el('select', { id: 'filter-state', name: 'state' }, el('option', { value: '' }, 'any'),
    STATES.map((s) => el('option', { value: s, selected: q.get('state') === s }, s)));
  const model = el('input', { id: 'filter-model', name: 'model', type: 'text', value: q.get('model') || '', autocomplete: 'off' });
  const verdict = el('select', { id: 'filter-verdict', name: 'verdict' }, el('option', { value: '' }, 'any'),
    VERDICTS.map((v) => el('option', { value: v, selected: q.get('verdict') === v }, v)));
  const scenario = el('select', { id: 'filter-scenario', name: 'scenario' }, el('option', { value: '' }, 'any'),
    SCENARIOS.map((v) => el('option', { value: v, selected: q.get('scenario') === v }, v)));
  const err = el('span', { class: 'field-error', id: 'filter-error', role: 'alert' });
  const apply = (ev) => {
    ev.preventDefault();
    for (const [k, input] of [['state', state], ['model', model], ['verdict', verdict], ['scenario', scenario]]) {
      const v = input.value.trim();
      if (v) q.set(k, v); else q.delete(k);
    }
    q.delete('page_token');
    navigate(page, true);
  };
  const clear = () => {
    state.value = ''; model.value = ''; verdict.value = ''; scenario.value = '';
    for (const k of ['state', 'model', 'verdict', 'scenario', 'page_token']) q.delete(k);
    navigate(page, true);
  };
  page.filterError = err;
  const field = (id, label, input) => el('span', { class: 'filter' }, el('label', { for: id }, label), ' ', input);
  return el('form', { id: 'runs-filter', class: 'actions filters', role: 'search', 'aria-label': 'Filter runs', onsubmit: apply },
    field('filter-state', 'State', state), field('filter-model', 'Model', model), field('filter-verdict', 'Verdict', verdict),
    field('filter-scenario', 'Scenario', scenario),
    el('button', { type: 'submit' }, 'Filter'), el('button', { type: 'button', class: 'secondary', onclick: clear }, 'Clear'), err);
}

// navigate puts the view's query in the URL (a link to this view) and
// loads it.
function navigate(page, push) {
  const qs = page.q.toString();
  const url = location.pathname + (qs ? '?' + qs : '');
  if (push) window.history.pushState(null, '', url); else window.history.replaceState(null, '', url);
  load(page).catch((err) => showError(page.history, err));
}

// A poll that fails (the daemon restarting, a proxy's 503) keeps the
// tables shown and says so; the page tries again after POLL_MS, doubled
// at each failure up to RETRY_MAX_MS, and gives up after RETRY_LIMIT
// failures in a row (a Retry button then), so a tab left open on a dead
// daemon does not ask forever.
const RETRY_MAX_MS = 30000;
const RETRY_LIMIT = 8;

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
    if (!page.loads) throw err; // nothing shown yet: the error is the page
    pollFailed(page, err);
    return;
  }
  if (gen !== generation) return;
  page.failures = 0;
  keepFocus(() => {
    showQueue(page.queue, active);
    showHistory(page, list);
  });
  // How many times the lists were drawn: what a test waits for to see a
  // refresh.
  page.loads = (page.loads || 0) + 1;
  page.history.dataset.loads = String(page.loads);
  page.status.replaceChildren(active.length ? `${active.length} run(s) queued or running; updating every 2 s.` : '');
  const live = active.length > 0 || list.runs.some((r) => r.state === 'queued' || r.state === 'running');
  if (live) timer = setTimeout(() => poll(page), POLL_MS);
}

function poll(page) {
  load(page).catch((err) => showError(page.history, err));
}

// pollFailed keeps what is shown, says the poll failed (a notice, not
// the table), and tries again later.
function pollFailed(page, err) {
  page.failures = (page.failures || 0) + 1;
  page.status.dataset.failures = String(page.failures);
  if (page.failures >= RETRY_LIMIT) {
    page.status.replaceChildren(el('span', { class: 'error', id: 'poll-notice' }, `Updating failed ${page.failures} times (${err.message}); the tables are as of the last update. `),
      el('button', { type: 'button', class: 'secondary', id: 'poll-retry', onclick: () => { page.failures = 0; poll(page); } }, 'Retry'));
    return;
  }
  const wait = Math.min(POLL_MS * 2 ** page.failures, RETRY_MAX_MS);
  page.status.replaceChildren(el('span', { class: 'error', id: 'poll-notice' },
    `Updating failed (${err.message}); trying again in ${Math.round(wait / 1000)} s. The tables are as of the last update.`));
  timer = setTimeout(() => poll(page), wait);
}

// ACTIVE_PAGES bounds the pages activeRuns reads per state (500 runs a
// page): a queue longer than that shows its first 5,000.
const ACTIVE_PAGES = 10;

// activeRuns are the running and queued runs, the running first, then
// the queue in order. One state per query: the daemon filters a single
// state as it walks its history, where a list of states reads each run's
// summary, up to 10,000 of them, at every poll of every tab.
async function activeRuns() {
  const [running, queued] = await Promise.all([inState('running'), inState('queued')]);
  const pos = (r) => r.queue_position ?? 0;
  return running.concat(queued.sort((a, b) => pos(a) - pos(b)));
}

async function inState(state) {
  const runs = [];
  let token = '';
  for (let i = 0; i < ACTIVE_PAGES; i++) {
    const q = new URLSearchParams({ state, limit: '500' });
    if (token) q.set('page_token', token);
    const list = await api('/v1/runs?' + q);
    runs.push(...(list.runs || []));
    token = list.next_page_token || '';
    if (!token) break;
  }
  return runs;
}

// keepFocus redraws without losing the keyboard's place: the focused
// control in a redrawn row is found again by its run and its role, a
// paging button by its id.
function keepFocus(redraw) {
  const a = document.activeElement;
  const row = a && a.closest && a.closest('tr[data-run-id]');
  const table = row && row.closest('table');
  const key = row && { table: table && table.id, id: row.dataset.runId, tag: a.tagName };
  const id = a && a.id;
  redraw();
  if (!key) {
    const again = id && document.getElementById(id);
    if (again && again !== a && !document.body.contains(a)) again.focus();
    return;
  }
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
// achieved is the API's achieved_qps once the run has ended (result.json's
// figure for its scenario), and while it runs the live completion rate.
function rates(r) {
  const s = r.spec.settings || {};
  const asked = r.search && r.search.found ? r.search.peak : s.target_qps;
  const p = r.progress;
  const achieved = r.achieved_qps ?? (r.state === 'running' && p ? p.current_qps : null);
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
