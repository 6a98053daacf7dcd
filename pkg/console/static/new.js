// The new-run page: a form whose fields are named as the run spec's JSON
// paths (settings.target_qps ...), built into the nested spec with empty
// fields left out, so what the form sends is what curl would send. The API
// is the judge: POST /v1/runs/check shows the spec and its command line as
// the form changes, POST /v1/runs queues it; their field errors are shown
// beside the field they name. The only checks made here are the ones the
// API cannot make for us: a header's literal value never leaves the page.
import { api, el, ApiError } from './lib.js';

// The fields, by section: [name (the spec's JSON path), label, kind, extra].
// kind: text, number, int, bool, list (comma-separated numbers), select
// (extra: its options), area (a textarea).
const TARGET = [
  ['target', 'Target', 'text', { placeholder: 'http://host:8000', required: true }],
  ['model', 'Model', 'text', { list: 'probe-models' }],
  ['model_version', 'Model version', 'text'],
  ['api', 'API', 'select', { options: ['', 'kserve-stream', 'generate', 'generate-stream', 'openai-completions', 'openai-chat'], blank: 'what the probe finds' }],
];
const MODE = [
  ['scenario', 'Scenario', 'select', { options: ['Server', 'Offline', 'SingleStream', 'MultiStream'] }],
  ['search.mode', 'Mode', 'select', { options: ['', 'find-peak', 'sweep'], blank: 'one run' }],
  ['search.lower_qps', 'Lower QPS', 'number', { mode: 'find-peak' }],
  ['search.upper_qps', 'Upper QPS', 'number', { mode: 'find-peak' }],
  ['search.precision', 'Precision (QPS)', 'number', { mode: 'find-peak' }],
  ['search.verify_runs', 'Verify runs', 'int', { mode: 'find-peak' }],
  ['search.goodput_percent', 'Goodput % (with an SLO)', 'number', { mode: 'find-peak' }],
  ['search.max_trials', 'Max trials', 'int', { mode: 'find-peak sweep' }],
  ['search.rates', 'Rates (QPS, comma-separated)', 'list', { mode: 'sweep', placeholder: '100,200,400' }],
  ['search.stop_saturated', 'Stop once saturated', 'bool', { mode: 'sweep' }],
];
const SETTINGS = [
  ['ruleset', 'Ruleset', 'select', { options: ['', 'loadgen6', 'v0.5'], blank: 'loadgen6 (default)' }],
  ['preset', 'MLPerf task', 'select', { options: ['', 'resnet50', 'mobilenet', 'ssd-resnet34', 'ssd-mobilenet', 'gnmt', 'llama2-70b', 'llama2-70b-interactive', 'llama3.1-405b', 'mixtral-8x7b', 'gptj'], blank: 'none' }],
  ['settings.target_qps', 'Target QPS', 'number'],
  ['settings.target_latency_ms', 'Latency bound (ms)', 'number'],
  ['settings.latency_percentile', 'Latency percentile', 'number', { placeholder: '0.99' }],
  ['settings.min_duration_ms', 'Min duration (ms)', 'int'],
  ['settings.max_duration_ms', 'Max duration (ms)', 'int'],
  ['settings.min_query_count', 'Min query count', 'int'],
  ['settings.warmup_ms', 'Warm-up (ms)', 'int'],
  ['settings.concurrency', 'Closed-loop concurrency', 'int'],
  ['settings.use_token_latencies', 'Judge by token latencies (TTFT, TPOT)', 'bool'],
  ['settings.ttft_latency_ms', 'TTFT bound (ms)', 'number'],
  ['settings.tpot_latency_ms', 'TPOT bound (ms)', 'number'],
  ['slo', 'SLO', 'text', { placeholder: 'ttft=500ms@p90,tpot=50ms' }],
  ['input_tokens', 'Input tokens', 'text', { placeholder: 'uniform:100:500' }],
  ['output_tokens', 'Output tokens', 'text', { placeholder: '128' }],
  ['stages', 'Stages (load shape)', 'text', { placeholder: '30s:100,60s:100->500' }],
  ['arrivals', 'Arrivals', 'text', { placeholder: 'poisson' }],
  ['data', 'Data (on the daemon\'s host)', 'text'],
  ['request_timeout_ms', 'Request timeout (ms)', 'int'],
  ['conns', 'Connections', 'int'],
];
const TLS = [
  ['tls.server_name', 'Server name (SNI)', 'text'],
  ['tls.insecure_skip_verify', 'Skip certificate verification', 'bool'],
  ['tls.client_cert', 'Client certificate', 'text', { placeholder: '@file:NAME', ref: 'file' }],
  ['tls.client_key', 'Client key', 'text', { placeholder: '@file:NAME', ref: 'file' }],
  ['tls.ca_pem', 'Extra CA certificates (PEM)', 'area'],
];

// Presets fill the settings a kind of run needs; the user may change them
// after. Fields a preset does not name are cleared, so presets do not mix.
export const PRESETS = {
  quick: {
    // Enough queries in 3 s for LoadGen's early stopping at p99 (some 460
    // with none over the bound): a quick check that can pass.
    label: 'Quick check (Server, 3 s at 200 QPS)',
    fields: { scenario: 'Server', 'settings.target_qps': 200, 'settings.min_duration_ms': 3000, 'settings.min_query_count': 1, 'settings.target_latency_ms': 100, 'settings.latency_percentile': 0.99 },
  },
  server: {
    label: 'MLPerf Server run (10 min)',
    fields: { scenario: 'Server', 'settings.target_qps': 100, 'settings.min_duration_ms': 600000, 'settings.target_latency_ms': 15, 'settings.latency_percentile': 0.99 },
  },
  offline: {
    label: 'MLPerf Offline run',
    fields: { scenario: 'Offline', 'settings.target_qps': 1000, 'settings.min_duration_ms': 600000 },
  },
  llm: {
    label: 'LLM Server run with token latencies',
    fields: { scenario: 'Server', 'settings.target_qps': 1, 'settings.min_duration_ms': 60000, 'settings.use_token_latencies': true, 'settings.ttft_latency_ms': 2000, 'settings.tpot_latency_ms': 200, 'input_tokens': 'uniform:100:500', 'output_tokens': '128', slo: 'ttft=2s,tpot=200ms' },
  },
};
const PRESET_NAMES = SETTINGS.map((f) => f[0]).filter((n) => n.startsWith('settings.') || ['slo', 'input_tokens', 'output_tokens'].includes(n)).concat(['scenario']);

const REF = /^@(env|file):.+/;

let form, topError, checkOut, seq = 0, timer = 0;

export async function render(main) {
  form = el('form', { id: 'new-run', novalidate: true, onsubmit: submit, oninput: changed, onchange: changed });
  topError = el('div', { id: 'form-error', class: 'error', role: 'alert', tabindex: '-1' });
  checkOut = specPanel();
  form.append(
    topError,
    section('Target and model', TARGET, probeBlock()),
    section('Scenario or mode', MODE),
    section('Settings', SETTINGS, presetPicker(), true),
    headersBlock(),
    section('TLS (https:// and grpcs:// targets)', TLS),
    el('div', { class: 'actions form-submit' }, el('button', { type: 'submit', id: 'submit' }, 'Start run')),
  );
  main.replaceChildren(el('h1', {}, 'New run'), form, checkOut.root);
  showMode();
  await check();
}

function section(title, fields, lead, presetFirst) {
  const grid = el('div', { class: 'form-grid' }, fields.map(field));
  const fs = el('fieldset', {}, el('legend', {}, title));
  if (lead && presetFirst) fs.append(lead, grid);
  else fs.append(grid, lead || '');
  return fs;
}

function field([name, label, kind, extra = {}]) {
  const id = 'f-' + name.replace(/[^a-z0-9]/gi, '-');
  let input;
  if (kind === 'select') {
    input = el('select', { id, name }, extra.options.map((o) => el('option', { value: o }, o || extra.blank || '')));
  } else if (kind === 'area') {
    input = el('textarea', { id, name, rows: 3 });
  } else if (kind === 'bool') {
    input = el('input', { id, name, type: 'checkbox' });
  } else {
    const numeric = kind === 'number' || kind === 'int';
    input = el('input', { id, name, type: numeric ? 'number' : 'text', step: numeric ? 'any' : undefined,
      placeholder: extra.placeholder, list: extra.list, autocomplete: 'off', spellcheck: 'false' });
  }
  input.dataset.kind = kind;
  if (extra.ref) input.dataset.ref = extra.ref;
  const wrap = el('div', { class: kind === 'bool' ? 'field check' : 'field' });
  if (extra.mode) wrap.dataset.mode = extra.mode;
  if (kind === 'bool') wrap.append(input, el('label', { for: id }, label));
  else wrap.append(el('label', { for: id }, label), input);
  return wrap;
}

// showMode shows the search fields of the mode picked, and only those.
function showMode() {
  const mode = form.elements['search.mode'].value;
  for (const w of form.querySelectorAll('[data-mode]')) {
    w.hidden = !mode || !w.dataset.mode.split(' ').includes(mode);
  }
}

function presetPicker() {
  const sel = el('select', { id: 'form-preset' }, el('option', { value: '' }, 'choose…'),
    Object.entries(PRESETS).map(([k, p]) => el('option', { value: k }, p.label)));
  const apply = el('button', { type: 'button', class: 'secondary', id: 'apply-preset', onclick: () => applyPreset(sel.value) }, 'Fill');
  return el('div', { class: 'actions preset' }, el('label', { for: 'form-preset' }, 'Preset'), sel, apply);
}

export function applyPreset(key) {
  const p = PRESETS[key];
  if (!p) return;
  for (const name of PRESET_NAMES) {
    const input = form.elements[name];
    const v = p.fields[name];
    if (input.type === 'checkbox') input.checked = v === true;
    else if (input.tagName === 'SELECT') input.value = v === undefined ? input.options[0].value : String(v);
    else input.value = v === undefined ? '' : String(v);
  }
  changed();
}

// Probe: what the endpoint says about itself and the model.
function probeBlock() {
  const out = el('div', { id: 'probe-result', 'aria-live': 'polite' });
  const btn = el('button', { type: 'button', class: 'secondary', id: 'probe', onclick: () => probe(btn, out) }, 'Probe');
  return el('div', { class: 'probe' }, el('datalist', { id: 'probe-models' }), el('div', { class: 'actions' }, btn,
    el('span', { class: 'muted' }, 'Asks the endpoint for its models, the model\'s metadata and its API.')), out);
}

async function probe(btn, out) {
  const spec = build().spec;
  const req = { target: spec.target || '' };
  for (const k of ['model', 'model_version', 'headers', 'tls']) if (spec[k] !== undefined) req[k] = spec[k];
  btn.disabled = true;
  out.replaceChildren(el('p', { class: 'muted' }, 'Probing…'));
  try {
    out.replaceChildren(...probeView(await api('/v1/probe', req)));
  } catch (err) {
    out.replaceChildren(el('p', { class: 'error' }, err.field ? `${err.field}: ${err.message}` : err.message));
  } finally {
    btn.disabled = false;
  }
}

// The server's models: the probe answer's models (the repository index,
// where the server lists one: Triton's model_repository extension), and
// the model probed.
function modelsOf(p) {
  const names = new Set((p.models || []).map((m) => (typeof m === 'string' ? m : m.name)));
  if (p.model && p.model.name) names.add(p.model.name);
  return [...names].filter(Boolean).sort();
}

function probeView(p) {
  const items = [];
  const s = p.server || {};
  items.push(el('p', {}, `Server ${s.name || '?'} ${s.version || ''} · live ${p.live ? 'yes' : 'no'} · ready ${p.ready ? 'yes' : 'no'}`,
    p.extensions && p.extensions.length ? ` · extensions: ${p.extensions.join(', ')}` : ''));
  const models = modelsOf(p);
  document.getElementById('probe-models').replaceChildren(...models.map((m) => el('option', { value: m })));
  if (models.length) {
    items.push(el('p', {}, 'Models: '), el('ul', { id: 'probe-models-list', class: 'probe-models' }, models.map((m) =>
      el('li', {}, el('button', { type: 'button', class: 'link', 'data-model': m, onclick: () => pickModel(m) }, m)))));
  }
  if (p.model) items.push(modelView(p), el('p', { id: 'probe-api' }, 'API: ' + apiFound(p)));
  if (p.inference) items.push(el('p', {}, `One request: ${p.inference.ok ? 'answered' : 'failed'} in ${p.inference.latency_ms.toFixed(2)} ms`, p.inference.error ? ` (${p.inference.error})` : ''));
  if (p.error) items.push(el('p', { class: 'error' }, p.error));
  return items;
}

// apiFound is the protocol a run would use, as the probe found it (its
// answer's api: a generative API, or "tensor").
function apiFound(p) {
  if (!p.api || p.api === 'tensor') return 'tensors (KServe v2 infer)';
  return p.api;
}

function modelView(p) {
  const m = p.model;
  const rows = [...(m.inputs || []).map((t) => ['input', t]), ...(m.outputs || []).map((t) => ['output', t])];
  return el('div', { class: 'table-wrap' }, el('table', { id: 'probe-model' },
    el('caption', {}, `Model ${m.name} (${m.platform || 'platform ?'}) · ready ${p.model_ready ? 'yes' : 'no'} · max batch ${p.max_batch_size}${p.batched ? ', batched' : ''}`),
    el('thead', {}, el('tr', {}, el('th', {}, 'tensor'), el('th', {}, 'name'), el('th', {}, 'type'), el('th', {}, 'shape'))),
    el('tbody', {}, rows.map(([k, t]) => el('tr', {}, el('td', {}, k), el('td', {}, t.name), el('td', {}, t.datatype), el('td', {}, JSON.stringify(t.shape)))))));
}

function pickModel(m) {
  form.elements.model.value = m;
  form.elements.model.focus();
  changed();
}

// Headers: name and a reference (@env:VAR or @file:PATH), never a value.
function headersBlock() {
  const rows = el('div', { id: 'header-rows' });
  const add = el('button', { type: 'button', class: 'secondary', id: 'add-header', onclick: () => { rows.append(headerRow(rows.children.length)); rows.lastChild.querySelector('input').focus(); } }, 'Add header');
  return el('fieldset', { id: 'headers' }, el('legend', {}, 'Headers'),
    el('p', { class: 'muted' }, 'Each value is a reference the daemon reads when the run starts: @env:VAR (a variable named in LOADGEND_SECRET_ENV) or @file:PATH (under LOADGEND_SECRETS_DIR). A value itself is never sent from here.'),
    rows, add);
}

let headerSeq = 0;
function headerRow() {
  const n = ++headerSeq;
  const row = el('div', { class: 'header-row' },
    el('div', { class: 'field' }, el('label', { for: `h-name-${n}` }, 'Name'), el('input', { id: `h-name-${n}`, 'data-header': 'name', autocomplete: 'off', spellcheck: 'false' })),
    el('div', { class: 'field' }, el('label', { for: `h-value-${n}` }, 'Value reference'), el('input', { id: `h-value-${n}`, 'data-header': 'value', placeholder: '@env:VAR', autocomplete: 'off', spellcheck: 'false' })));
  row.append(el('button', { type: 'button', class: 'link', 'aria-label': `Remove header ${n}`, onclick: () => { row.remove(); changed(); } }, 'Remove'));
  return row;
}

// build turns the form into the spec: dotted names nest, empty fields are
// left out. local: errors found here (name → message), before any request.
export function build() {
  const spec = {};
  const local = new Map();
  for (const input of form.querySelectorAll('[name]')) {
    if (input.closest('[data-mode]') && input.closest('[data-mode]').hidden) continue;
    const [v, err] = valueOf(input);
    if (err) local.set(input.name, err);
    if (v === undefined) continue;
    const path = input.name.split('.');
    let o = spec;
    for (const k of path.slice(0, -1)) o = o[k] || (o[k] = {});
    o[path[path.length - 1]] = v;
  }
  headersInto(spec, local);
  return { spec, local };
}

function valueOf(input) {
  const kind = input.dataset.kind;
  if (kind === 'bool') return [input.checked ? true : undefined];
  if ((kind === 'number' || kind === 'int') && input.validity.badInput) return [undefined, 'not a number'];
  const raw = input.value.trim();
  if (raw === '') return [undefined];
  if (input.dataset.ref === 'file' && !/^@file:.+/.test(raw)) {
    // A key pasted in is a secret: left out of the spec (and so of the
    // page and of any request), and never quoted.
    return [undefined, 'must be a reference @file:NAME to a file under the daemon\'s LOADGEND_SECRETS_DIR, not the certificate or key itself'];
  }
  if (kind === 'number' || kind === 'int') return [Number(raw)];
  if (kind === 'list') {
    const xs = raw.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
    return xs.some((x) => Number.isNaN(x)) ? [undefined, 'a comma-separated list of numbers'] : [xs];
  }
  return [kind === 'area' ? input.value : raw];
}

function headersInto(spec, local) {
  const hs = {};
  for (const row of form.querySelectorAll('.header-row')) {
    const name = row.querySelector('[data-header="name"]');
    const value = row.querySelector('[data-header="value"]');
    const n = name.value.trim(), v = value.value.trim();
    if (!n && !v) continue;
    if (!n) { local.set('#' + name.id, 'give the header\'s name'); continue; }
    if (!REF.test(v)) {
      // Said without quoting what was typed: it may be a secret.
      local.set('#' + value.id, 'must be a reference, @env:VAR or @file:PATH: a header\'s value is never sent from the browser');
      continue;
    }
    hs[n] = v;
  }
  if (Object.keys(hs).length) spec.headers = hs;
}

// Field errors: beside the input the path names (or the headers block for
// "headers"), aria-invalid and aria-describedby on the input; a path the
// form lacks goes to the top.
function inputFor(path) {
  if (path.startsWith('#')) return form.querySelector(path);
  const byName = form.querySelector(`[name="${CSS.escape(path)}"]`);
  if (byName) return byName;
  if (path === 'headers' || path.startsWith('headers.')) return form.querySelector('[data-header="value"]') || document.getElementById('add-header');
  // settings.x.y → the nearest named ancestor path the form has.
  const parts = path.split('.');
  while (parts.length > 1) {
    parts.pop();
    const up = form.querySelector(`[name="${CSS.escape(parts.join('.'))}"]`);
    if (up) return up;
  }
  return null;
}

function clearErrors(kind) {
  for (const e of form.querySelectorAll(`.field-error[data-from="${kind}"]`)) {
    const input = document.getElementById(e.dataset.for);
    if (input) { input.removeAttribute('aria-invalid'); input.removeAttribute('aria-describedby'); }
    e.remove();
  }
  if (topError.dataset.from === kind) { topError.textContent = ''; delete topError.dataset.from; }
}

function showFieldError(path, message, kind) {
  const input = inputFor(path);
  if (!input || input.hidden || (input.closest('[hidden]'))) {
    topError.textContent = path ? `${path}: ${message}` : message;
    topError.dataset.from = kind;
    return topError;
  }
  const id = input.id + '-error';
  let e = document.getElementById(id);
  if (!e) {
    e = el('span', { id, class: 'field-error', 'data-for': input.id });
    input.insertAdjacentElement('afterend', e);
  }
  e.dataset.from = kind;
  e.textContent = message;
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', id);
  return input;
}

function changed(ev) {
  if (ev && ev.target && ev.target.name === 'search.mode') showMode();
  clearTimeout(timer);
  timer = setTimeout(check, 300);
}

// check asks the API what it makes of the spec: its errors beside their
// fields, the spec as JSON and as `loadgend run`'s command line.
async function check() {
  const n = ++seq;
  const { spec, local } = build();
  clearErrors('local');
  for (const [path, msg] of local) showFieldError(path, msg, 'local');
  checkOut.json.textContent = JSON.stringify(spec, null, 2);
  if (!spec.target) {
    clearErrors('check');
    checkOut.setCommand(null, 'Give a target to see the command line.');
    return;
  }
  try {
    const res = await api('/v1/runs/check', spec);
    if (n !== seq) return;
    clearErrors('check');
    checkOut.json.textContent = JSON.stringify(res.spec || spec, null, 2);
    checkOut.setCommand(res.command || (res.command_line || []).join(' '), notExpressible(res.not_expressible));
  } catch (err) {
    if (n !== seq) return;
    clearErrors('check');
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) {
      // A loadgend from before the route: /v1/runs/check is then taken
      // for the run "check" (405: GET only) or not found.
      checkOut.setCommand(null, 'Checking and the command line are not available from this loadgend (no POST /v1/runs/check); the form still submits.');
    } else if (err instanceof ApiError && err.status === 400) {
      showFieldError(err.field, err.message, 'check');
      checkOut.setCommand(null, 'Fix the field marked to see the command line.');
    } else {
      checkOut.setCommand(null, 'Check failed: ' + err.message);
    }
  }
}

function notExpressible(list) {
  return list && list.length ? 'No flag of loadgend run expresses: ' + list.join(', ') : '';
}

function specPanel() {
  const json = el('pre', { id: 'spec-json', tabindex: '0', 'aria-label': 'The run spec as JSON' });
  const cmd = el('pre', { id: 'spec-command', tabindex: '0', 'aria-label': 'The equivalent loadgend run command' });
  const note = el('p', { id: 'spec-note', class: 'muted', 'aria-live': 'polite' });
  const root = el('section', { class: 'spec-panel', 'aria-labelledby': 'spec-title' },
    el('h2', { id: 'spec-title' }, 'Spec'),
    el('div', { class: 'actions' }, el('h3', {}, 'JSON'), copyButton('copy-json', json)), json,
    el('div', { class: 'actions' }, el('h3', {}, 'Command line'), copyButton('copy-command', cmd)), cmd, note);
  return {
    root, json,
    setCommand(line, why) { cmd.textContent = line || ''; cmd.hidden = !line; note.textContent = why || ''; },
  };
}

function copyButton(id, pre) {
  const b = el('button', { type: 'button', class: 'secondary', id, onclick: async () => {
    try {
      await navigator.clipboard.writeText(pre.textContent);
      b.textContent = 'Copied';
    } catch (_) {
      // No clipboard (an http:// page that is not localhost): select the
      // text so the keyboard's copy takes it.
      const r = document.createRange();
      r.selectNodeContents(pre);
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      b.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => { b.textContent = 'Copy'; }, 2000);
  } }, 'Copy');
  return b;
}

// submit: the local checks, then POST /v1/runs; an error goes beside its
// field (focus moved there) and nothing else happens.
async function submit(ev) {
  ev.preventDefault();
  clearTimeout(timer);
  const { spec, local } = build();
  clearErrors('local');
  clearErrors('check');
  clearErrors('submit');
  if (local.size) {
    let first = null;
    for (const [path, msg] of local) {
      const at = showFieldError(path, msg, 'local');
      first = first || at;
    }
    first.focus();
    return;
  }
  const btn = document.getElementById('submit');
  btn.disabled = true;
  try {
    const created = await api('/v1/runs', spec);
    location.assign('/ui/runs/' + encodeURIComponent(created.id));
  } catch (err) {
    btn.disabled = false;
    const at = err instanceof ApiError && err.status === 400 ? showFieldError(err.field, err.message, 'submit')
      : showFieldError('', `${err.message}${err.code ? ` (${err.code})` : ''}`, 'submit');
    at.focus();
  }
}
