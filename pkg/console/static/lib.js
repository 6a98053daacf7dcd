// Shared by every page: the API client (bearer token from session storage),
// the event stream reader, DOM building without innerHTML, and formatting.
// Nothing here builds HTML from strings: text goes in as text.

const TOKEN_KEY = 'loadgend-token';

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || '';
    this.field = e.field || '';
  }
}

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
}

// askToken shows the token dialog and resolves once the user gave one
// (true) or cancelled (false). wrong: the last one was refused.
export function askToken(wrong) {
  const dlg = document.getElementById('token-dialog');
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  const err = document.getElementById('token-error');
  const cancel = document.getElementById('token-cancel');
  err.textContent = wrong ? 'loadgend refused that token (401). Try again.' : '';
  input.value = '';
  return new Promise((resolve) => {
    const done = (ok) => {
      form.removeEventListener('submit', onSubmit);
      cancel.removeEventListener('click', onCancel);
      dlg.removeEventListener('cancel', onCancel);
      if (dlg.open) dlg.close();
      resolve(ok);
    };
    const onSubmit = (ev) => { ev.preventDefault(); setToken(input.value.trim()); done(true); };
    const onCancel = (ev) => { ev.preventDefault(); done(false); };
    form.addEventListener('submit', onSubmit);
    cancel.addEventListener('click', onCancel);
    dlg.addEventListener('cancel', onCancel);
    if (!dlg.open) dlg.showModal();
    input.focus();
  });
}

function headers(extra) {
  const h = Object.assign({ 'Accept': 'application/json' }, extra || {});
  const t = token();
  if (t) h['Authorization'] = 'Bearer ' + t;
  return h;
}

// request is fetch with the token; a 401 asks for the token and tries
// again (until the user cancels: then the 401 is thrown).
async function request(path, init) {
  let wrong = false;
  for (;;) {
    const res = await fetch(path, Object.assign({}, init, { headers: headers(init && init.headers), credentials: 'omit', cache: 'no-store' }));
    if (res.status !== 401) return res;
    if (!(await askToken(wrong || token() !== ''))) return res;
    wrong = true;
  }
}

async function errorOf(res) {
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  return new ApiError(res.status, body);
}

// api: GET (no body) or POST (body: sent as JSON) to a /v1 path; the JSON
// answer, or an ApiError carrying the API's code and field.
export async function api(path, body) {
  const init = body === undefined ? { method: 'GET' }
    : { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
  const res = await request(path, init);
  if (!res.ok) throw await errorOf(res);
  return res.status === 204 ? null : res.json();
}

// text: a run file's text (GET).
export async function text(path) {
  const res = await request(path, { method: 'GET' });
  if (!res.ok) throw await errorOf(res);
  return res.text();
}

// download fetches path with the token and saves it as name (a link could
// not carry the bearer header).
export async function download(path, name) {
  const res = await request(path, { method: 'GET' });
  if (!res.ok) throw await errorOf(res);
  const url = URL.createObjectURL(await res.blob());
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// events follows a server-sent event stream with fetch (EventSource cannot
// send the bearer header): on(event, data) for each event, data parsed
// from JSON. It resolves when the stream ends; signal aborts it.
export async function events(path, on, signal) {
  const res = await request(path, { method: 'GET', signal, headers: { 'Accept': 'text/event-stream' } });
  if (!res.ok) throw await errorOf(res);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = 'message', data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      let parsed = null;
      try { parsed = data ? JSON.parse(data) : null; } catch (_) { parsed = data; }
      on(event, parsed);
    }
  }
}

// el builds an element: attrs (on* keys are listeners; class, for, and
// data-* set as attributes), children as nodes or text.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Formatting.
export function ms(v, digits = 2) { return v === undefined || v === null ? '–' : Number(v).toFixed(digits) + ' ms'; }
export function num(v, digits = 1) { return v === undefined || v === null ? '–' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits }); }
export function when(iso) { return iso ? new Date(iso).toLocaleString() : '–'; }
export function duration(startIso, endIso) {
  if (!startIso) return '–';
  const s = ((endIso ? new Date(endIso) : new Date()) - new Date(startIso)) / 1000;
  return s < 120 ? s.toFixed(1) + ' s' : (s / 60).toFixed(1) + ' min';
}

// showError puts an error where the page says what went wrong.
export function showError(container, err) {
  container.replaceChildren(el('p', { class: 'error', role: 'alert' }, String(err && err.message || err)));
}
