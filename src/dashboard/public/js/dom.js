// Small DOM helpers. Text always goes in as text nodes (never innerHTML), so nothing the API returns (server
// names, console lines) can become markup.

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

/** Tells assistive technology (and everyone) what just happened, in the page's polite live region. */
let clearTimer;
export function announce(message) {
  const status = document.getElementById('status');
  status.textContent = message;
  clearTimeout(clearTimer);
  clearTimer = setTimeout(() => (status.textContent = ''), 8000);
}

/** An inline error next to the thing that failed; role=alert so it is read out at once. */
export function errorBox(message) {
  return h('p', { class: 'error', role: 'alert' }, message);
}

export function fmtTime(iso) {
  if (!iso) return 'never';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function fmtClock(ms) {
  return new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(2)} GiB` : `${(n / 1024 ** 2).toFixed(0)} MiB`;
}

export function fmtNumber(n, digits = 1) {
  return n === null || n === undefined ? '–' : Number(n).toFixed(digits);
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

/** Runs `fn` every `ms` until `signal` aborts; errors are shown, not thrown (the next round may succeed). */
export function every(ms, signal, fn) {
  const timer = setInterval(() => fn().catch((e) => announce(e.message)), ms);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
