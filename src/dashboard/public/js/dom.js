// Small DOM helpers. Text always goes in as text nodes (never innerHTML), so nothing the API returns (server
// names, console lines) can become markup.
import { fieldSentence } from './problems.js';

/** h('button', { type: 'button', onclick: fn, 'aria-label': 'Start' }, 'Start') */
export function h(tag, attrs = {}, ...children) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.setAttribute('class', value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces a container's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** How long a message stays (issue 29: messages leave by themselves); a failure stays longer. */
export const TOAST_MS = 6000;

/**
 * Tells everyone (and assistive technology, through the polite live region) what just happened, as a message at
 * the bottom that leaves by itself and never takes a click meant for what is under it (app.css .toasts).
 */
export function announce(message, failed = false) {
  const box = document.getElementById('status');
  const toast = h('div', { class: failed ? 'toast failed' : 'toast' }, message);
  box.append(toast);
  while (box.childElementCount > 3) box.firstElementChild.remove();
  setTimeout(() => toast.remove(), failed ? 2 * TOAST_MS : TOAST_MS);
}

/** An inline error next to the thing that failed; role=alert so it is read out at once. */
export function errorBox(message) {
  return h('p', { class: 'error', role: 'alert' }, message);
}

/** A labelled form control: a visible <label for>, then the help, limit and error lines it is described by. */
export function field(text, control, { help, limit } = {}) {
  const id = control.id;
  const helpEl = help ? h('p', { class: 'help', id: `${id}-help` }, help) : null;
  const limitEl = limit ? h('p', { class: 'limit', id: `${id}-limit` }, limit) : null;
  const errorEl = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  const described = [helpEl, limitEl, errorEl].filter(Boolean).map((e) => e.id).join(' ');
  control.setAttribute('aria-describedby', described);
  return h('div', { class: 'field', 'data-field': id }, h('label', { for: id }, text), control, limitEl, helpEl, errorEl);
}

/**
 * Puts each problem's `errors` (RFC 9457 extension, docs/conventions.md "Errors") at its field: `controls` maps a
 * JSON Pointer (`/body/max_players`) to the control, and each field says its problems in one sentence about the
 * customer's input (problems.js). Returns the problems no field took. `[]` clears every field.
 */
export function showFieldErrors(container, controls, errors) {
  for (const el of container.querySelectorAll('.field-error')) {
    el.hidden = true;
    el.textContent = '';
  }
  for (const el of container.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  const left = [];
  const taken = new Map(); // control → its problems, said in one sentence (problems.js)
  for (const e of errors) {
    const control = controls.get(e.pointer);
    const out = control && document.getElementById(`${control.id}-error`);
    if (!out) {
      left.push(e);
      continue;
    }
    taken.set(control, [...(taken.get(control) ?? []), e]);
  }
  for (const [control, problems] of taken) {
    const out = document.getElementById(`${control.id}-error`);
    out.textContent = fieldSentence(control, problems);
    out.hidden = false;
    control.setAttribute('aria-invalid', 'true');
  }
  container.querySelector('[aria-invalid="true"]')?.focus();
  return left;
}

/**
 * A table that becomes one card per row on a phone (app.css table.cards): `columns` are the header texts (an empty
 * one is read out as "Actions"), each row an array of cells, the first a row header. `attrs(row index)` adds row
 * attributes.
 */
export function table(caption, columns, rows, rowAttrs = () => ({})) {
  return h('table', { class: 'cards' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'Actions'))))),
    h('tbody', {}, rows.map((cells, i) => h('tr', rowAttrs(i),
      cells.map((cell, j) => (j === 0
        ? h('th', { scope: 'row' }, cell)
        : h('td', columns[j] ? { 'data-label': columns[j] } : {}, cell)))))));
}

/**
 * A button's click handler: the button is disabled while `fn` runs, a failure goes to `fail(message)`, and
 * `after()` runs either way (a refresh of what the button changed).
 */
export function busyWhile(fn, fail, after = async () => {}) {
  return async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await fn();
    } catch (e) {
      fail(e.message);
    } finally {
      button.disabled = false;
      await after().catch(() => undefined);
    }
  };
}
