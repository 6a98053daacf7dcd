package daemon_test

// The in-page halves of the console's accessibility checks (checkA11y in
// console_qa_test.go). Each is a function expression evaluated through the
// DevTools protocol (which the page's CSP does not govern) and returns a
// list of problems, each naming the element: tag, id or name, and text.

// a11yDescribeJS names an element for a failure message.
const a11yDescribeJS = `
function describe(e) {
  if (!e || e === document.body) return 'body';
  let s = e.tagName.toLowerCase();
  if (e.id) s += '#' + e.id;
  if (e.getAttribute('name')) s += '[name="' + e.getAttribute('name') + '"]';
  if (e.getAttribute('type')) s += '[type="' + e.getAttribute('type') + '"]';
  if (e.className && typeof e.className === 'string') s += '.' + e.className.trim().split(/\s+/).join('.');
  const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ');
  if (t) s += ' "' + t.slice(0, 40) + '"';
  return s;
}
function shown(e) {
  if (e.closest('dialog:not([open])')) return false;
  const cs = getComputedStyle(e);
  return cs.visibility !== 'hidden' && cs.display !== 'none' && e.getClientRects().length > 0;
}
`

// a11yLabelsJS: every field has a label with text (<label for>, a label
// around it, aria-label or aria-labelledby); every button and link has a
// name.
const a11yLabelsJS = `() => {` + a11yDescribeJS + `
  const out = [];
  for (const e of document.querySelectorAll('input, select, textarea')) {
    const type = (e.getAttribute('type') || '').toLowerCase();
    if (type === 'hidden' || type === 'submit' || type === 'button' || type === 'reset') continue;
    const byLabel = [...(e.labels || [])].some((l) => l.textContent.trim() !== '');
    const byAria = (e.getAttribute('aria-label') || '').trim() !== '';
    const by = (e.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)
      .some((id) => { const l = document.getElementById(id); return l && l.textContent.trim() !== ''; });
    if (!byLabel && !byAria && !by) out.push(describe(e) + ': no label (give it <label for="' + (e.id || 'its id') + '"> or aria-label)');
  }
  for (const e of document.querySelectorAll('button, a[href], [role="button"]')) {
    if (!shown(e)) continue;
    const name = (e.innerText || e.getAttribute('aria-label') || e.getAttribute('title') || '').trim();
    if (!name) out.push(describe(e) + ': a control with no text or aria-label');
  }
  return out;
}`

// a11yFocusablesJS lists the elements Tab should visit, in document order
// (no positive tabindex is allowed: it would break that order).
const a11yFocusablesJS = `() => {` + a11yDescribeJS + `
  const sel = 'a[href], button, input, select, textarea, summary, [tabindex]';
  const out = [];
  for (const e of document.querySelectorAll(sel)) {
    if (e.disabled || !shown(e) && !e.classList.contains('skip')) continue;
    if ((e.getAttribute('type') || '') === 'hidden') continue;
    const ti = e.getAttribute('tabindex');
    if (ti !== null && Number(ti) < 0) continue;
    if (ti !== null && Number(ti) > 0) out.push('POSITIVE-TABINDEX ' + describe(e));
    out.push(describe(e));
  }
  return out;
}`

// a11yFocusedJS describes the focused element and whether its focus is
// visible (an outline of some width, or a box shadow).
const a11yFocusedJS = `() => {` + a11yDescribeJS + `
  const e = document.activeElement;
  if (!e || e === document.body) return {name: 'body', visible: false, style: ''};
  const cs = getComputedStyle(e);
  const outline = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0;
  const shadow = cs.boxShadow && cs.boxShadow !== 'none';
  return {name: describe(e), visible: outline || shadow,
    style: 'outline: ' + cs.outlineStyle + ' ' + cs.outlineWidth + ' ' + cs.outlineColor + '; box-shadow: ' + cs.boxShadow};
}`

// a11yContrastJS: the contrast of every shown element with text of its own
// against its effective background (the first opaque background up its
// ancestors, translucent ones composed over it, white at the top), text
// colour and opacity composed in. Disabled controls are exempt (WCAG).
const a11yContrastJS = `(min) => {` + a11yDescribeJS + `
  const rgba = (s) => { const m = s.match(/[\d.]+/g) || [0, 0, 0]; return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
  const over = (top, bottom) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]); };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = (e) => {
    const layers = [];
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const out = [];
  const vw = document.documentElement.clientWidth;
  for (const e of document.body.querySelectorAll('*')) {
    if (!shown(e) || e.closest('svg, canvas, [disabled], :disabled')) continue;
    const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own) continue;
    const r = e.getBoundingClientRect();
    if (r.right <= 0 || r.bottom <= 0 || r.left >= Math.max(vw, document.documentElement.scrollWidth)) continue; // off screen (the skip link until focused)
    let opacity = 1;
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) opacity *= parseFloat(getComputedStyle(n).opacity);
    const bg = background(e);
    const fg0 = rgba(getComputedStyle(e).color);
    const fg = over([fg0[0], fg0[1], fg0[2], fg0[3] * opacity], bg);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    if (ratio < min) out.push(describe(e) + ': contrast ' + ratio.toFixed(2) + ':1 (text rgb(' + fg.slice(0, 3).map(Math.round) + ') on rgb(' + bg.slice(0, 3).map(Math.round) + '))');
  }
  return out;
}`

// a11yOverflowJS: the document does not scroll sideways; if it does, the
// elements sticking out (outside a scrolling box such as .table-wrap).
const a11yOverflowJS = `() => {` + a11yDescribeJS + `
  const d = document.documentElement;
  if (d.scrollWidth <= d.clientWidth) return [];
  const out = ['the document scrolls sideways: scrollWidth ' + d.scrollWidth + ' > clientWidth ' + d.clientWidth];
  for (const e of document.body.querySelectorAll('*')) {
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right <= d.clientWidth + 0.5 || r.left < 0) continue;
    let scrolled = false;
    for (let n = e.parentElement; n && n !== document.body; n = n.parentElement) {
      const ox = getComputedStyle(n).overflowX;
      if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') { scrolled = true; break; }
    }
    if (scrolled) continue;
    const p = e.parentElement;
    if (p && p !== document.body && p.getBoundingClientRect().right > d.clientWidth + 0.5) continue; // name the outermost
    out.push(describe(e) + ': right edge at ' + Math.round(r.right) + ' px (wrap it, or put it in a .table-wrap)');
    if (out.length > 8) break;
  }
  return out;
}`
