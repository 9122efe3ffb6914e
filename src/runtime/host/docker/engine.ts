// A small client of the Docker Engine API (its v1.41 spec; sections named below) over HTTP: a unix socket
// or tcp, as DOCKER_HOST names it, or HTTPS with a client certificate (Docker's --tlsverify, engine-tls.ts). Only
// what the Docker environment needs; plain node:http and node:https, no dependency.
import http from 'node:http';
import https from 'node:https';
import type { Duplex, Readable } from 'node:stream';
import { tlsMaterial } from './engine-tls';

/** The API version every request names (Docker 20.10 speaks 1.41; one-shot stats need it). */
const API = '/v1.41';
/** How long a streamed request (an archive) may go without a byte before it fails. */
const IDLE_MS = 60_000;

export class EngineError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where an engine listens: `unix:///var/run/docker.sock` or `tcp://host:2375` (DOCKER_HOST's two plain forms). */
export interface EngineEndpoint {
  socketPath?: string;
  host?: string;
  port?: number;
}

export function parseDockerHost(url: string): EngineEndpoint {
  const unix = /^unix:\/\/(\/.+)$/.exec(url);
  if (unix) return { socketPath: unix[1] };
  const tcp = /^(?:tcp|http):\/\/([^:/]+|\[[0-9a-f:.]+\]):(\d{1,5})\/?$/i.exec(url);
  if (tcp) return { host: tcp[1].replace(/^\[|\]$/g, ''), port: Number(tcp[2]) };
  throw new Error(`DOCKER_HOST must look like unix:///var/run/docker.sock or tcp://host:2375; got "${url}"`);
}

/** One engine (one node). Every method rejects with EngineError on an HTTP error status, or the socket's error. */
export interface Engine {
  readonly endpoint: string;
  /** A JSON request; resolves with the parsed body (null when empty). */
  json<T = unknown>(method: string, path: string, body?: unknown, timeoutMs?: number, signal?: AbortSignal): Promise<T>;
  /**
   * A request whose body is a stream (an image tarball, an archive: POST or PUT); resolves with the whole response
   * text. Rejects when the body fails, or the socket is silent for `idleMs` (default IDLE_MS).
   */
  upload(path: string, body: Readable, contentType: string, method?: 'POST' | 'PUT', idleMs?: number): Promise<string>;
  /**
   * A GET whose answer is a stream (an archive, a container's logs), resolved once its status is known (an error
   * status rejects). The stream errors when the socket is silent for `idleMs` (default IDLE_MS), so an engine that
   * hangs never holds a reader forever.
   */
  download(path: string, idleMs?: number): Promise<Readable>;
  /** A streamed response of JSON objects (stats); returns a stop function. `onEnd` runs once when it ends. */
  stream(path: string, onObject: (obj: unknown) => void, onEnd: (err?: Error) => void): () => void;
  /**
   * Resolves once the engine answers a ping (API "Ping") on a connection of its own, not one kept alive: an engine on
   * its way down closes its listener first yet still serves the connections it has, so only a new one tells.
   */
  acceptsNew(timeoutMs?: number): Promise<void>;
  /** Hijacks the connection (attach): the raw duplex socket after the 101 answer. */
  hijack(path: string): Promise<Duplex>;
}

/**
 * `tls`: the engine listens with --tlsverify (README "Nodes"): every connection is HTTPS with the client
 * certificate in `certDir`, and the engine's certificate must chain to its ca.pem and name the URL's host. Each
 * new connection reads the folder's current files (engine-tls.ts), so a rotation needs no restart.
 */
export function createEngine(dockerHost: string, tls?: { certDir: string }): Engine {
  const endpoint = parseDockerHost(dockerHost);
  if (tls && !endpoint.host) throw new Error(`TLS needs a tcp:// engine; got "${dockerHost}"`);
  const material = tls && tlsMaterial(tls.certDir, endpoint.host ?? '');
  const c: Connection = {
    dockerHost,
    request: material ? https.request : http.request,
    options: (method, path, headers = {}) => ({ ...endpoint, ...material?.(), method, path: API + path, headers: { Host: 'docker', ...headers } }),
  };
  return {
    endpoint: dockerHost,
    json: (method, path, body, timeoutMs = 60_000, signal) => requestJson(c, method, path, body, timeoutMs, signal),
    upload: (path, body, contentType, method = 'POST', idleMs = IDLE_MS) => upload(c, path, body, contentType, method, idleMs),
    download: (path, idleMs = IDLE_MS) => download(c, path, idleMs),
    stream: (path, onObject, onEnd) => streamObjects(c, path, onObject, onEnd),
    hijack: (path) => hijack(c, path),
    acceptsNew: (timeoutMs = 10_000) => acceptsNew(c, timeoutMs),
  };
}

/** What every request to one engine shares: the address it was given (for messages) and the request's options. */
interface Connection {
  dockerHost: string;
  /** node:http's, or node:https's for an engine with TLS. */
  request: typeof http.request;
  options(method: string, path: string, headers?: Record<string, string>): http.RequestOptions;
}

/** The whole answer as text. */
function collect(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** Throws the engine's error status as an EngineError, with its `message` when the body is the API's JSON error. */
function check(res: http.IncomingMessage, text: string, method: string, path: string): void {
  if ((res.statusCode ?? 500) < 400) return;
  let message = text;
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // not JSON: keep the text
  }
  throw new EngineError(res.statusCode ?? 500, `${method} ${path}: ${res.statusCode} ${message.trim()}`);
}

/** Engine.json. */
async function requestJson<T>(c: Connection, method: string, path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<T> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const text = await requestText(c, method, path, { payload, timeoutMs, signal });
  return (text.trim() === '' ? null : JSON.parse(text)) as T;
}

/** Engine.acceptsNew. */
async function acceptsNew(c: Connection, timeoutMs: number): Promise<void> {
  await requestText(c, 'GET', '/_ping', { timeoutMs, fresh: true });
}

/**
 * One request and its whole answer as text (an error status rejects, check). `fresh`: on a connection of its own
 * (`agent: false`), not one Node's agent keeps alive.
 */
function requestText(c: Connection, method: string, path: string, o: { payload?: string; timeoutMs: number; signal?: AbortSignal; fresh?: boolean }): Promise<string> {
  const headers: Record<string, string> = o.payload === undefined ? {} : { 'Content-Type': 'application/json' };
  return new Promise((resolve, reject) => {
    const req = c.request({ ...c.options(method, path, headers), timeout: o.timeoutMs, signal: o.signal, ...(o.fresh ? { agent: false } : {}) }, (res) => {
      collect(res)
        .then((text) => {
          check(res, text, method, path);
          resolve(text);
        })
        .catch(reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer from ${c.dockerHost} within ${o.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(o.payload);
  });
}

/** Engine.upload. */
function upload(c: Connection, path: string, body: Readable, contentType: string, method: 'POST' | 'PUT', idleMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = c.request({ ...c.options(method, path, { 'Content-Type': contentType }), timeout: idleMs }, (res) => {
      collect(res)
        .then((text) => {
          check(res, text, method, path);
          resolve(text);
        })
        .catch(reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: ${c.dockerHost} silent for ${idleMs} ms`)));
    req.on('error', reject);
    body.on('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}

/** Engine.download. */
function download(c: Connection, path: string, idleMs: number): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const req = c.request({ ...c.options('GET', path), timeout: idleMs }, (res) => {
      if ((res.statusCode ?? 500) < 400) {
        resolve(res);
        return;
      }
      collect(res).then((text) => check(res, text, 'GET', path)).catch(reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: ${c.dockerHost} silent for ${idleMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Engine.stream: one JSON object a line (API "Get container stats based on resource usage", stream=1). */
function streamObjects(c: Connection, path: string, onObject: (obj: unknown) => void, onEnd: (err?: Error) => void): () => void {
  let ended = false;
  const end = (err?: Error) => {
    if (!ended) onEnd(err);
    ended = true;
  };
  let options: http.RequestOptions;
  try {
    options = c.options('GET', path);
  } catch (err) {
    // unreadable TLS material: ends as a failed request would, never synchronously
    queueMicrotask(() => end(err as Error));
    return () => (ended = true);
  }
  const req = c.request(options, (res) => {
    if ((res.statusCode ?? 500) >= 400) return void collect(res).then((t) => end(new EngineError(res.statusCode ?? 500, t)), end);
    let partial = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? ''; // split gives at least one part: the text after the last newline
      for (const p of parts) {
        try {
          if (p.trim() !== '') onObject(JSON.parse(p));
        } catch {
          // one torn object is skipped; the next comes within a second
        }
      }
    });
    res.on('end', () => end());
    res.on('error', end);
  });
  req.on('error', end);
  req.end();
  return () => {
    ended = true;
    req.destroy();
  };
}

/** Engine.hijack. */
function hijack(c: Connection, path: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const req = c.request(c.options('POST', path, { Connection: 'Upgrade', Upgrade: 'tcp' }));
    req.on('upgrade', (_res, socket, head) => {
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.on('response', (res) => void collect(res).then((t) => reject(new EngineError(res.statusCode ?? 500, `POST ${path}: ${t}`)), reject));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Splits the engine's multiplexed stdout/stderr (a container without a TTY, API "Attach to a container": an
 * 8-byte header per frame, byte 0 the stream, bytes 4-7 the big-endian length) into its two streams.
 */
export function demux(source: Readable, onData: (stream: 'stdout' | 'stderr', chunk: Buffer) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  source.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 8) {
      const size = buffered.readUInt32BE(4);
      if (buffered.length < 8 + size) break;
      onData(buffered[0] === 2 ? 'stderr' : 'stdout', buffered.subarray(8, 8 + size));
      buffered = buffered.subarray(8 + size);
    }
  });
}
