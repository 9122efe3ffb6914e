// The dashboard is one more client of the public /v1 API, like any SDK: after sign-in it asks the session
// endpoint for a bearer token that lives minutes, keeps it in this module's memory only (never localStorage, so
// another script or a later visitor of the profile cannot read it), sends it as Authorization: Bearer, and
// renews it before it ends. The session cookie itself is httpOnly and only ever sent to /dashboard.

import { problemSentences, SERVER_GONE } from './problems.js';

let csrfToken = '';
let bearer = '';
let renewTimer;
let renewing = null;
/**
 * Set while a password change replaces this page's session and token (changePassword): the change revokes the old
 * token, so requests and the events stream wait for the new one instead of sending the old (a 401 the browser logs).
 */
let replacing = null;
/** Who is signed in, and the id of this page's own API token (Settings marks it). */
export const session = { email: '', tokenId: '' };
/**
 * Set by app.js: what to do when the session is gone (show the sign-in form), and how to say that the page waits
 * `seconds` before asking again after a 429 (authorized).
 */
export const hooks = { signedOut: () => {}, waiting: (_seconds, _limit) => {} };

/** A problem document (RFC 9457) answered by the service, or a network failure. */
export class ApiError extends Error {
  constructor(status, problem, res) {
    // A schema's refusal (every problem names its `rule`) is said by its fields, in words about the input
    // (problems.js: "Name cannot be empty."), not as "The request has 2 problems; see errors." and the schema's
    // text; the service's own refusals say it in their detail already.
    const errors = problem?.errors ?? [];
    const text = problem?.code === 'rate_limited' && res ? tooMany(res)
      : problem?.code === 'server_not_found' ? SERVER_GONE // not "There is no server srv_…" to a removed member
        : problem?.detail || problem?.title || `The service answered ${status}.`;
    super(errors.length && errors.every((e) => e.rule) ? problemSentences(errors).join(' ') : text);
    this.status = status;
    this.problem = problem;
  }
}

/**
 * How long a 429 asks to wait, in seconds: Retry-After (RFC 9110 §10.2.3), else the RateLimit header's `t`
 * (draft-ietf-httpapi-ratelimit-headers-08 §3.1); 5 when neither says.
 */
function waitOf(res) {
  const after = Number(res.headers.get('Retry-After'));
  if (Number.isFinite(after) && after >= 0 && res.headers.has('Retry-After')) return after;
  const t = /;\s*t=(\d+)/.exec(res.headers.get('RateLimit') ?? '');
  return t ? Number(t[1]) : 5;
}

/** The account's allowance, `q` requests per `w` seconds, from RateLimit-Policy (draft-08 §2.1); null when not said. */
function limitOf(res) {
  const policy = res.headers.get('RateLimit-Policy') ?? '';
  const q = /;\s*q=(\d+)/.exec(policy);
  const w = /;\s*w=(\d+)/.exec(policy);
  return q ? { q: Number(q[1]), w: w ? Number(w[1]) : 60 } : null;
}

/**
 * The service's own words ("Your tokens together may make…") are for API clients; a customer in the dashboard
 * does not think of tokens: they opened tabs (docs/dashboard-budget.md).
 */
function tooMany(res) {
  return `${busyText(limitOf(res))} Try again in ${waitOf(res)} seconds.`;
}

/** What a 429 means to a customer: the whole account's allowance is used up, not just this page's. */
export function busyText(limit) {
  const per = !limit || limit.w === 60 ? 'a minute' : `every ${limit.w} seconds`;
  const allowance = limit ? `at most ${limit.q} ${per}` : 'a limited number a minute';
  return `Your account has made too many requests just now (${allowance}, counting this page, your other open tabs and any scripts using your API tokens).`;
}

export class SignedOut extends Error {}

async function readJson(res) {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * fetch, tried again after a network failure: a phone between networks, or a browser that drops the requests in
 * flight when the host's network interfaces change (Chromium's net::ERR_NETWORK_CHANGED). Only for requests safe
 * to send twice: reads (RFC 9110 §9.2.1), and the page's own token (a second one, if the first arrived, is as
 * harmless as the page's renewals: bound to the session, short-lived, never listed). A write to /v1 is never
 * repeated here, since it may have arrived.
 */
async function fetchAgain(path, init = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(path, init);
    } catch (e) {
      if (attempt >= 3 || init.signal?.aborted) throw e;
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
    }
  }
}

/** POST to a session endpoint: same-origin cookie plus the CSRF token in a header. */
async function sessionPost(path, body, send = fetch) {
  const headers = { 'X-CSRF-Token': csrfToken };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return send(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

function remember(s) {
  csrfToken = s.csrf_token;
  session.email = s.email;
}

/**
 * Gets the page's API token and schedules its renewal at three quarters of its lifetime (`expires_in`, seconds,
 * so the browser's clock does not matter). The renewal names the token it replaces, which the service revokes.
 */
function newBearer() {
  // One renewal at a time: requests that fail together wait for the same new token.
  renewing ??= fetchBearer().finally(() => (renewing = null));
  return renewing;
}

async function fetchBearer() {
  clearTimeout(renewTimer);
  const res = await sessionPost('/dashboard/session-token', session.tokenId ? { replaces: session.tokenId } : undefined, fetchAgain);
  if (res.status === 401) {
    bearer = session.tokenId = '';
    throw new SignedOut('The session has ended.');
  }
  const created = await readJson(res);
  if (!res.ok) throw new ApiError(res.status, created);
  bearer = created.token;
  session.tokenId = created.id;
  renewTimer = setTimeout(renewInBackground, created.expires_in * 750);
}

/** A renewal that fails for another reason than the session's end (429, network) is tried again shortly. */
function renewInBackground() {
  newBearer().catch((e) => {
    if (e instanceof SignedOut) hooks.signedOut();
    else renewTimer = setTimeout(renewInBackground, 10_000);
  });
}

/** Resumes a session from its cookie; false when there is none. */
export async function resume() {
  const s = await readJson(await fetchAgain('/dashboard/session', { cache: 'no-store' }));
  if (!s || !s.signed_in) return false;
  remember(s);
  await newBearer();
  return true;
}

/**
 * Signs in; throws ApiError with the service's message when refused. Returns null once signed in, or, for an
 * account with a second factor, what it has (`{totp, passkey}`): then signInSecondFactor finishes the sign-in.
 */
export async function signIn(email, password) {
  const body = await postSignIn('/dashboard/sign-in', { email, password });
  if (!body.signed_in) return body.second_factor;
  remember(body);
  await newBearer();
  return null;
}

/** The sign-in's second step: `{code}`, `{recovery_code}` or `{passkey}` (the browser's WebAuthn answer). */
export async function signInSecondFactor(proof) {
  remember(await postSignIn('/dashboard/sign-in/second-factor', proof));
  await newBearer();
}

/** WebAuthn request options for the passkeys of the account signing in. */
export function passkeySignInOptions() {
  return postSignIn('/dashboard/sign-in/passkey-options');
}

async function postSignIn(path, data) {
  const headers = data === undefined ? {} : { 'Content-Type': 'application/json' };
  const res = await fetch(path, { method: 'POST', headers, body: data === undefined ? undefined : JSON.stringify(data) });
  const body = await readJson(res);
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

/** A call to a session endpoint of the signed-in page (Settings → Two-factor): cookie and CSRF token. */
export async function sessionCall(method, path, body) {
  const headers = { 'X-CSRF-Token': csrfToken };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await readJson(res);
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** Ends the session on the server (which revokes this page's token too) and forgets everything here. */
export async function signOut() {
  clearTimeout(renewTimer);
  await sessionPost('/dashboard/sign-out').catch(() => undefined);
  bearer = csrfToken = session.email = session.tokenId = '';
}

/**
 * Changes the password. The service ends every session of the user (this one too, with its token) and starts a
 * new one for this browser, so the page carries on with the new session's CSRF token and a new API token.
 */
export async function changePassword(currentPassword, newPassword, revokeTokens) {
  let replaced = () => undefined;
  replacing = new Promise((resolve) => (replaced = resolve));
  try {
    const res = await sessionPost('/dashboard/password', {
      current_password: currentPassword,
      new_password: newPassword,
      revoke_tokens: revokeTokens,
    });
    const body = await readJson(res);
    if (!res.ok) throw new ApiError(res.status, body);
    remember(body);
    session.tokenId = '';
    await newBearer();
    return body;
  } finally {
    replacing = null;
    replaced();
  }
}

/**
 * Calls /v1. A 401 means the token expired or was revoked: if it was renewed meanwhile, use the new one;
 * otherwise get a new one once (the session may still be valid), and if that fails too, the session is over.
 */
export async function api(method, path, body, extraHeaders = {}) {
  const res = await authorized(method, path, body, extraHeaders);
  const data = res.status === 204 ? null : await readJson(res);
  if (!res.ok) throw new ApiError(res.status, data, res);
  return data;
}

/** The answer to one /v1 request with this page's bearer token, renewed once on a 401 (see api). */
async function authorized(method, path, body, extraHeaders = {}) {
  let renewed = false;
  let waited = false;
  for (;;) {
    await replacing;
    const used = bearer;
    const headers = { Authorization: `Bearer ${used}`, ...extraHeaders };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    // no-store: the data is live, and a revalidation would come back 304, which the contract does not list.
    const init = { method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body) };
    const res = await (method === 'GET' ? fetchAgain(path, init) : fetch(path, init));
    if (res.status === 401 && !renewed) {
      renewed = true;
      if (used === bearer) await renewOrSignOut();
      continue;
    }
    // Rate limited: wait as long as the service asks and ask once more. A refused request changed nothing (the
    // limiter answers before any operation runs), so a write may be sent again too.
    if (res.status === 429 && !waited && waitOf(res) <= MAX_WAIT_S && (await waitedOut(res, await readJson(res.clone())))) {
      waited = true;
      continue;
    }
    return res;
  }
}

/** The longest wait a page sits through before it shows the 429 (the default window is a minute). */
const MAX_WAIT_S = 65;
let waitingUntil = 0;

/**
 * A 429 `rate_limited` (its `problem`) asking for at most MAX_WAIT_S: waited out, true, so the request may be sent
 * once more. `res` is a Response, or anything with `status` and `headers.get/has` (an upload's XHR: withToken).
 */
async function waitedOut(res, problem) {
  if (res.status !== 429 || problem?.code !== 'rate_limited' || waitOf(res) > MAX_WAIT_S) return false;
  await waitForBudget(waitOf(res), limitOf(res));
  return true;
}

/** Waits `seconds`; says so once for the requests that wait together. */
async function waitForBudget(seconds, limit) {
  const until = Date.now() + seconds * 1000;
  if (until > waitingUntil + 1000) hooks.waiting(seconds, limit);
  waitingUntil = Math.max(waitingUntil, until);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000 + Math.random() * 500));
}

/** One /v1 read answered as a Response, for its headers (a file's ETag: file-editor.js); its token as api()'s. */
export function getResponse(path, extraHeaders = {}) {
  return authorized('GET', path, undefined, extraHeaders);
}

/**
 * A /v1 request sent by the caller's own means (an XMLHttpRequest, for an upload's progress events: file-upload.js):
 * `send(token)` resolves with `{status, text, headers}` (`headers.get/has` as a Response's); a 401 gets a new token
 * once and a 429 `rate_limited` is waited out once, as api() does (authorized).
 */
export async function withToken(send) {
  let renewed = false;
  let waited = false;
  for (;;) {
    const used = bearer;
    const result = await send(used);
    if (result.status === 401 && !renewed) {
      renewed = true;
      if (used === bearer) await renewOrSignOut();
      continue;
    }
    if (result.status === 429 && !waited && (await waitedOut(result, parseJson(result.text)))) {
      waited = true;
      continue;
    }
    return result;
  }
}

function parseJson(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * Saves a file from /v1 (a backup's archive) as `name`. A link cannot carry the bearer token, so the page fetches
 * it and hands the browser the bytes.
 */
export async function download(path, name) {
  const res = await authorized('GET', path);
  if (!res.ok) throw new ApiError(res.status, await readJson(res), res);
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

async function renewOrSignOut() {
  try {
    await newBearer();
  } catch (e) {
    if (e instanceof SignedOut) hooks.signedOut();
    throw e;
  }
}

/** Every item of a paginated /v1 collection (`data`, `has_more`, `next_cursor`). */
export async function listAll(path, onPage = () => {}) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api('GET', `${path}${sep}limit=100${cursor ? `&starting_after=${cursor}` : ''}`);
    items.push(...page.data);
    onPage(page); // what the page says besides its items (ServerList.dns_zone)
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return items;
}

/** An Idempotency-Key; crypto.randomUUID needs a secure context, getRandomValues does not. */
export function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** How long a stream refused for the user's cap (too_many_streams) waits before it asks again. */
const LIMITED_RETRY_MS = 60_000;

/**
 * Follows a /v1 Server-Sent Events stream until `signal` aborts. EventSource cannot send an Authorization
 * header, so this reads the body with fetch() and parses it as the HTML standard's event-stream section says
 * (§9.2.6: lines end with CR, LF or CRLF; `:` starts a comment; one leading space after the colon is dropped;
 * a blank line dispatches). It reconnects with Last-Event-ID so the service replays what was missed.
 * `onStatus` hears 'live' once connected, 'limited' when the user has as many streams open as allowed (asked
 * again each minute), 'retrying' while it is down or rate limited (asked again after Retry-After or a backoff).
 */
/** How long a stream must hold before a drop reconnects at once again (follow's backoff). */
const STABLE_MS = 60_000;

export async function follow(path, onEvent, signal, lastEventId, onStatus = () => {}) {
  let lastId = lastEventId ?? null;
  let retryMs = 1000;
  while (!signal.aborted) {
    let waitMs = null;
    try {
      await replacing;
      const used = bearer;
      const headers = { Authorization: `Bearer ${used}`, Accept: 'text/event-stream' };
      if (lastId !== null) headers['Last-Event-ID'] = lastId;
      const res = await fetch(path, { headers, signal, cache: 'no-store' });
      if (res.status === 401 && used === bearer) await renewOrSignOut();
      else if (res.status === 401) continue; // renewed meanwhile: reconnect with the new token at once
      else if (res.status === 429) {
        const problem = await readJson(res);
        const limited = problem?.code === 'too_many_streams';
        onStatus(limited ? 'limited' : 'retrying');
        waitMs = limited ? LIMITED_RETRY_MS : Math.max(1, waitOf(res)) * 1000;
      } else if (!res.ok) throw new ApiError(res.status, await readJson(res), res);
      else {
        const since = Date.now();
        onStatus('live');
        await readEvents(res.body, signal, (e) => {
          if (e.id !== null) lastId = e.id;
          onEvent(e);
        });
        // The backoff starts over only after a stream that held a minute: one that keeps dropping at once would
        // otherwise reconnect, and have every page re-read itself on 'live', every second or two (the rate budget,
        // docs/dashboard-budget.md).
        if (Date.now() - since >= STABLE_MS) retryMs = 1000;
        if (used !== bearer) continue; // ended because its token was replaced: resume with the new one at once
      }
    } catch (e) {
      if (signal.aborted || e instanceof SignedOut) return;
      if (e instanceof ApiError && e.status < 500) throw e;
      onStatus('retrying');
    }
    if (waitMs !== null) {
      await sleep(waitMs, signal);
      continue;
    }
    await sleep(retryMs, signal);
    retryMs = Math.min(retryMs * 2, 30_000);
  }
}

async function readEvents(body, signal, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener('abort', () => reader.cancel().catch(() => undefined), { once: true });
  let buffer = '';
  let event = { event: 'message', id: null, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    // A chunk may end between the CR and LF of one CRLF: hold a trailing CR back until the next chunk.
    const held = buffer.endsWith('\r') ? '\r' : '';
    const lines = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
    buffer = lines.pop() + held; // the last piece has no line end yet
    for (const line of lines) {
      if (line === '') {
        if (event.data.length) dispatch({ event: event.event, id: event.id, data: event.data.join('\n') });
        event = { event: 'message', id: null, data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'event') event.event = val;
      else if (field === 'data') event.data.push(val);
      else if (field === 'id' && !val.includes('\0')) event.id = val;
    }
  }
}
