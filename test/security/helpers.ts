import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { loadSpec } from '../../src/spec';
import type { Db } from '../../src/store/db';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Json = any;

/** One operation of openapi/v1.yaml, dereferenced, with path-level parameters merged in (openapi-backend's view). */
export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema: Json }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
  security: Array<Record<string, string[]>>;
}

/**
 * The spec as the service routes it: every operation (read at run time, so a new one is covered without editing
 * these tests; synchronous, so jest can register one test per operation), and the `code` enum of the Problem
 * schema. Local `$ref`s are resolved in place (the spec has no cycles; a cycle would throw here, loudly).
 */
export function specOperations(): { operations: SpecOperation[]; problemCodes: string[]; document: Json } {
  const raw = loadSpec().document as Json;
  const resolving = new Set<string>();
  const deref = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(deref);
    if (!node || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string') {
      const ref: string = node.$ref;
      if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported; is ${ref} a valid $ref?`);
      if (resolving.has(ref)) throw new Error(`$ref cycle through ${ref}`);
      resolving.add(ref);
      const target = ref
        .slice(2)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((at: Json, key) => at?.[key], raw);
      if (target === undefined) throw new Error(`Unresolvable $ref ${ref}`);
      const out = deref(target);
      resolving.delete(ref);
      return out;
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(v)]));
  };
  const document = deref(raw);
  const operations: SpecOperation[] = [];
  for (const [p, item] of Object.entries<Json>(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']) {
      const op = item[method];
      if (!op) continue;
      // OpenAPI 3.1 §4.8.10.1: operation parameters override path-item parameters of the same name and location.
      const own: Json[] = op.parameters ?? [];
      const inherited = ((item.parameters ?? []) as Json[]).filter((q) => !own.some((o) => o.name === q.name && o.in === q.in));
      operations.push({
        ...op,
        method,
        path: p,
        parameters: [...inherited, ...own],
        security: op.security ?? document.security ?? [],
      });
    }
  }
  return { operations, problemCodes: document.components.schemas.ProblemCode.enum, document }; // the known codes (Problem.code is open: x-open-enum)
}

/** The path with `{name}` replaced by the (already percent-encoded) segments given. */
/**
 * The operation's required query parameters with their schema's example (`?path=world%2Flevel.dat`), or '': a
 * request built from the spec must pass validation to reach the check a test is about.
 */
export function requiredQuery(op: SpecOperation): string {
  const q = new URLSearchParams();
  for (const p of op.parameters.filter((x) => x.in === 'query' && x.required)) q.set(p.name, String(p.schema.example));
  const text = q.toString();
  return text ? `?${text}` : '';
}

export function fillPath(template: string, segments: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_m, name: string) => segments[name] ?? '');
}

export interface RawRequest {
  method: string;
  /** Path and query exactly as sent on the request line (no normalisation, no encoding added). */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** True when the answer was an event stream that was cut after its first bytes. */
  stream: boolean;
}

/**
 * Sends exactly what it is given over a real socket (supertest would normalise paths and headers, and would hang
 * on an event stream). An event stream is read until its first chunk and then dropped, so `text` holds what the
 * service wrote before any event could have been sent.
 */
export function rawRequest(base: string, req: RawRequest, agent?: http.Agent, timeoutMs = 15_000): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    const headers: Record<string, string | number> = { ...(req.headers ?? {}) };
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
      headers['Content-Length'] = body.length;
    }
    const r = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, insecureHTTPParser: false },
      (res) => {
        const chunks: Buffer[] = [];
        const isStream = /^text\/event-stream/.test(String(res.headers['content-type'] ?? ''));
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (isStream) {
            // Let the first write(s) arrive, then hang up: the stream would otherwise stay open for ever.
            setTimeout(() => r.destroy(), 30);
          }
        });
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), stream: isStream });
        res.on('end', done);
        res.on('close', done);
        res.on('error', () => done());
      },
    );
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms: ${req.method} ${req.path.slice(0, 200)}`)));
    r.on('error', reject);
    if (body !== undefined) r.write(body);
    r.end();
  });
}

/**
 * Columns that legitimately move without a request asking for it:
 * - tokens.last_used_at: authentication writes it (at most once a minute per token) for every authenticated
 *   request, including one that is then rejected for its shape or a missing resource; it is bookkeeping about
 *   the caller, not a change the request asked for.
 */
export const VOLATILE_COLUMNS: Record<string, string[]> = { tokens: ['last_used_at'] };

/**
 * A fingerprint of everything the service keeps: every row of every table (minus VOLATILE_COLUMNS) and the
 * list of files under DATA_DIR/servers. Two equal fingerprints mean the request changed nothing.
 */
export function snapshot(db: Db, dataDir?: string): { hash: string; tables: Record<string, string> } {
  return fingerprintOf(db, dataDir ? serverFiles(dataDir) : undefined);
}

/** The files under DATA_DIR/servers, as snapshot() lists them. */
const serverFiles = (dataDir: string) => listFiles(path.join(dataDir, 'servers')).join('|');

function fingerprintOf(db: Db, files: string | undefined): { hash: string; tables: Record<string, string> } {
  const tables: Record<string, string> = {};
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[];
  for (const name of names) {
    const skip = new Set(VOLATILE_COLUMNS[name] ?? []);
    const rows = (db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]).map((row) =>
      JSON.stringify(Object.entries(row).filter(([k]) => !skip.has(k))),
    );
    rows.sort();
    tables[name] = crypto.createHash('sha256').update(rows.join('\n')).digest('hex').slice(0, 16) + `:${rows.length}`;
  }
  if (files !== undefined) tables['fs:servers'] = files;
  const hash = crypto.createHash('sha256').update(JSON.stringify(tables)).digest('hex');
  return { hash, tables };
}

/**
 * snapshot() for a loop of many cases on one service: a fingerprint is taken again only when something may have
 * changed since the last one. SQLite's total_changes() counts every row an INSERT, UPDATE or DELETE touched on the
 * connection, triggers included (https://sqlite.org/c3ref/total_changes.html), and the service writes through `db`
 * alone; so while it and the file list stand still, the last fingerprint is still true. A write that changes
 * nothing (or is rolled back) moves the count too, and then a full snapshot is taken and compared as before.
 */
export function snapshotter(db: Db, dataDir?: string): () => ReturnType<typeof snapshot> {
  const totalChanges = db.prepare('SELECT total_changes()').pluck();
  let last: { changes: number; files: string | undefined; taken: ReturnType<typeof snapshot> } | undefined;
  return () => {
    const changes = totalChanges.get() as number;
    const files = dataDir ? serverFiles(dataDir) : undefined;
    if (last && last.changes === changes && last.files === files) return last.taken;
    last = { changes, files, taken: fingerprintOf(db, files) };
    return last.taken;
  };
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    out.push(full.slice(dir.length));
    if (entry.isDirectory()) out.push(...listFiles(full).map((f) => `/${entry.name}${f}`));
  }
  return out.sort();
}

/** Which tables differ between two snapshots (for a readable failure). */
export function diffSnapshots(a: { tables: Record<string, string> }, b: { tables: Record<string, string> }): string[] {
  const keys = new Set([...Object.keys(a.tables), ...Object.keys(b.tables)]);
  return [...keys].filter((k) => a.tables[k] !== b.tables[k]).map((k) => `${k}: ${a.tables[k]} → ${b.tables[k]}`);
}

/** An id of the same shape and length as `like`, that names nothing. */
export function missingIdLike(like: string): string {
  const [prefix, rest] = like.split('_');
  let fake = '';
  while (fake.length < rest.length) fake += crypto.randomBytes(32).toString('base64').replace(/[^0-9A-Za-z]/g, '');
  return `${prefix}_${fake.slice(0, rest.length)}`;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
