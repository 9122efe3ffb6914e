// What changed, live: the account's events (GET /v1/events/stream) for every page, instead of reading on a timer
// (issue 38; the budget per page is docs/dashboard-budget.md). One stream serves all of the browser's tabs: the
// tab holding a Web Lock is the leader, follows the stream and relays each event to the others on a
// BroadcastChannel; when it closes, the lock passes to another tab, which resumes with the Last-Event-ID it was
// relayed (so nothing is lost in between). Open streams count against the user's cap (STREAMS_PER_USER,
// docs/conventions.md "Real-time"): four tabs hold one events stream, not four. Past the cap, or while the stream
// is down, pages read slowly instead (`whenChanged`'s fallback) and the page says so in words.
import { follow } from './api.js';

const listeners = new Set();
const statusListeners = new Set();
/** 'connecting', 'live', 'limited' (too many streams open), 'retrying' (down or rate limited), 'stopped'. */
let status = 'connecting';
let stopper = null;

function setStatus(next) {
  if (next === status) return;
  status = next;
  for (const fn of [...statusListeners]) fn(status);
}

/** Calls `fn(event)` with each event (the Event schema) until `signal` aborts; returns the unsubscribe function. */
export function onEvent(fn, signal) {
  listeners.add(fn);
  const off = () => listeners.delete(fn);
  signal?.addEventListener('abort', off, { once: true });
  return off;
}

/** Calls `fn(status)` now and on every change until `signal` aborts. */
export function onStatus(fn, signal) {
  statusListeners.add(fn);
  signal?.addEventListener('abort', () => statusListeners.delete(fn), { once: true });
  fn(status);
}

export const isLive = () => status === 'live';

/** Starts following the account's events in this tab (as leader or follower); `stopLive` ends it (sign-out). */
export function startLive(email) {
  stopLive();
  const ctl = new AbortController();
  stopper = ctl;
  const signal = ctl.signal;
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(`gsh-events:${email}`) : null;
  let lastId = null;
  let leading = false;
  const deliver = (event) => {
    lastId = event.id;
    for (const fn of [...listeners]) fn(event);
  };
  if (channel) {
    channel.onmessage = ({ data }) => {
      if (data.kind === 'event') deliver(data.event);
      else if (data.kind === 'status' && !leading) setStatus(data.status);
      else if (data.kind === 'hello' && leading) channel.postMessage({ kind: 'status', status });
    };
    signal.addEventListener('abort', () => channel.close(), { once: true });
  }
  const lead = async () => {
    leading = true;
    const tell = (s) => {
      channel?.postMessage({ kind: 'status', status: s });
      setStatus(s);
    };
    try {
      await follow('/v1/events/stream', (e) => {
        const event = JSON.parse(e.data);
        channel?.postMessage({ kind: 'event', event });
        deliver(event);
      }, signal, lastId, tell);
    } catch {
      // Refused for good (not a 429 or an outage): keep the lock, so the other tabs do not try in turn.
      tell('stopped');
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    }
  };
  // Web Locks need a secure context (HTTPS, or this machine): elsewhere each tab follows the stream itself.
  if (channel && navigator.locks) {
    navigator.locks.request(`gsh-events:${email}`, { signal }, lead).catch(() => undefined);
    channel.postMessage({ kind: 'hello' }); // a leader already there answers with its stream's status
  } else lead();
}

export function stopLive() {
  stopper?.abort();
  stopper = null;
  status = 'connecting';
}

/**
 * Runs `read()` after events that `matches`, coalesced: one read `delayMs` after the first of a burst, and one
 * more if events came while it ran (a start's starting → running is one or two reads, not one per event). While
 * the stream is not live it reads every `fallbackMs` instead, and once when it is live again. Until `signal` aborts.
 */
export function whenChanged(signal, matches, read, { delayMs = 750, fallbackMs = 60_000, failed = () => undefined } = {}) {
  let timer = null;
  let running = false;
  let again = false;
  const run = async () => {
    timer = null;
    if (signal.aborted) return;
    if (running) return void (again = true);
    running = true;
    try {
      await read();
    } catch (e) {
      if (!signal.aborted) failed(e);
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      soon();
    }
  };
  const soon = () => {
    if (!timer && !signal.aborted) timer = setTimeout(run, delayMs);
  };
  onEvent((e) => matches(e) && soon(), signal);
  let slow = null;
  let wasDown = false;
  onStatus((s) => {
    const down = s !== 'live' && s !== 'connecting';
    if (down && !slow) slow = setInterval(soon, fallbackMs);
    if (!down && slow) {
      clearInterval(slow);
      slow = null;
    }
    if (s === 'live' && wasDown) soon(); // what changed while it was down
    wasDown = down;
  }, signal);
  signal.addEventListener('abort', () => {
    clearTimeout(timer);
    clearInterval(slow);
  }, { once: true });
}

/**
 * Events from now on, kept until taken: made before a write, so the write's outcome cannot arrive unseen before
 * its answer. `next(pred, ms)` resolves with the first kept event `pred` accepts, or null after `ms`.
 */
export function recorder(signal) {
  const kept = [];
  let wake = () => undefined;
  const off = onEvent((e) => {
    kept.push(e);
    wake();
  }, signal);
  return {
    async next(pred, ms) {
      const until = Date.now() + ms;
      for (;;) {
        const i = kept.findIndex(pred);
        if (i >= 0) return kept.splice(i, 1)[0];
        const left = until - Date.now();
        if (left <= 0 || signal?.aborted) return null;
        await new Promise((resolve) => {
          const t = setTimeout(resolve, left);
          wake = () => (clearTimeout(t), resolve());
        });
      }
    },
    stop: off,
  };
}

/** Shows `streamNote(what, s)` in `el`, hidden while there is nothing to say. */
export function showStreamNote(el, what) {
  return (s) => {
    el.textContent = streamNote(what, s);
    el.hidden = !el.textContent;
  };
}

/**
 * What a section says about its own stream (the console's, the metrics'), from follow()'s status: '' while it is
 * live. `what` names it: "New console lines".
 */
export function streamNote(what, s) {
  if (s === 'limited') return `${what} are paused: your account has as many live views open as it may (other tabs, or scripts using your API tokens). Close one; this page asks again every minute.`;
  if (s === 'retrying') return `${what} are interrupted; reconnecting.`;
  return '';
}
