import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveTarget, type Lookup } from './address';
import type { Outcome } from '../store/outbox-repo';

/** The most of an answer's body that is read; the rest is discarded with the connection (a receiver cannot make us buffer). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com/, "Signature scheme"): `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body`, keyed with the base64-decoded part of the secret after `whsec_`.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface SendOptions {
  allowPrivate: boolean;
  lookup: Lookup;
  timeoutMs: number;
  now: () => number;
  /** Keep-alive connections to reuse (createAgents); without it every attempt opens its own connection. */
  agents?: Agents;
  /** Which webhook the attempt is for: its connections are its own (createAgents). */
  webhookId?: string;
  /** Aborted at shutdown: an attempt that got no answer ends at once instead of at its time limit. */
  signal?: AbortSignal;
}

/**
 * The certificate errors Node's TLS reports (tls.TLSSocket authorizationError codes), which the owner of a receiver
 * needs to fix their endpoint. Every other failure without an answer is told as one (noAnswer).
 */
const CERTIFICATE_ERRORS = new Set([
  'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH', 'INVALID_CA',
]);

/**
 * The one text of an attempt that got no HTTP answer, whatever the reason: refused, reset, unreachable, silent or
 * not HTTP. Telling them apart would tell a tenant which ports of a host are open (SECURITY.md, SSRF).
 */
export const noAnswer = (timeoutMs: number) => `no answer within ${timeoutMs} ms: the connection failed or the receiver did not answer in time`;

/**
 * Keep-alive agents, one per URL origin and resolved address, so a busy receiver is not paid a new TCP (and TLS)
 * handshake per delivery. The address is part of the key: a connection is only reused for the address this
 * attempt resolved and checked (DNS rebinding, SECURITY.md), never for one an earlier answer gave. At most `max`
 * agents are kept, the least recently used destroyed first; an idle connection is closed after `idleMs`.
 */
export function createAgents(opts: { max: number; socketsPerAgent: number; idleMs: number }) {
  const agents = new Map<string, http.Agent>();
  return {
    /**
     * The agent of one webhook's attempts to one origin and address: webhooks never share a connection pool, so
     * one tenant's receiver that holds its connections never makes another's attempts wait for a socket.
     */
    get(url: URL, address: string, webhookId = ''): http.Agent {
      const key = `${webhookId} ${url.protocol}//${url.host} ${address}`;
      let agent = agents.get(key);
      if (agent) {
        agents.delete(key); // re-inserted last: the Map's order is least recently used first
      } else {
        const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
        agent = new Agent({ keepAlive: true, maxSockets: opts.socketsPerAgent, maxFreeSockets: opts.socketsPerAgent, timeout: opts.idleMs, scheduling: 'lifo' });
        if (agents.size >= opts.max) {
          // The least recently used agent with no attempt under way: destroying a busy one would fail its attempt.
          const idle = [...agents].find(([, a]) => Object.keys(a.sockets).length === 0 && Object.keys(a.requests).length === 0);
          if (idle) {
            agents.delete(idle[0]);
            idle[1].destroy();
          }
        }
      }
      agents.set(key, agent);
      return agent;
    },
    /** Closes every connection (the dispatcher's close). */
    destroy(): void {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
    size: () => agents.size,
  };
}

export type Agents = ReturnType<typeof createAgents>;

/**
 * One attempt: resolves the URL's host once, refuses a forbidden address, and POSTs to exactly that address
 * (the request's own lookup answers with it; TLS still verifies the certificate for the host name). Never follows
 * a redirect. The whole attempt, answer included, ends within `timeoutMs`. Never throws: the outcome says.
 *
 * An attempt that gets no answer ends at its time limit, whatever happened (noAnswer), so neither its text, its
 * duration nor when its outcome is written tells a refused port from a silent one. It holds its webhook's share
 * of the dispatcher for that long, never another tenant's (docs/architecture.md "Events and webhooks").
 */
export async function sendOnce(url: string, secret: string, msg: { id: string; body: string }, opts: SendOptions): Promise<Outcome> {
  const startedAt = opts.now();
  const done = (status: number | null, error: string | null): Outcome => ({ startedAt, durationMs: Math.max(0, opts.now() - startedAt), status, error });
  let target: { address: string; family: number };
  try {
    target = await resolveTarget(url, opts.allowPrivate, opts.lookup);
  } catch (err) {
    return done(null, `refused: ${(err as Error).message}`);
  }
  const timestamp = Math.floor(startedAt / 1000);
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: typeof target[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const parsed = new URL(url);
  const client = parsed.protocol === 'https:' ? https : http;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    // A connection is only given back for reuse after a whole answer was read; any other end destroys it.
    const finish = (status: number | null, error: string | null, reusable = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!reusable) req.destroy();
      resolve(done(status, error));
    };
    // No answer: said the same way, and only once the time limit has passed (or at shutdown).
    const failed = (err?: NodeJS.ErrnoException) => {
      if (settled) return;
      if (err?.code && CERTIFICATE_ERRORS.has(err.code)) {
        finish(null, `the receiver's TLS certificate was not accepted (${err.code})`);
        return;
      }
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const end = () => resolve({ startedAt, durationMs: opts.timeoutMs, status: null, error: noAnswer(opts.timeoutMs) });
      const left = startedAt + opts.timeoutMs - opts.now();
      if (left <= 0 || opts.signal?.aborted) {
        end();
        return;
      }
      const pad = setTimeout(end, left);
      opts.signal?.addEventListener('abort', () => {
        clearTimeout(pad);
        end();
      }, { once: true });
    };
    const req = client.request(url, {
      method: 'POST',
      lookup: pinned,
      agent: opts.agents ? opts.agents.get(parsed, target.address, opts.webhookId) : false,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'gsh-webhooks/1',
        'webhook-id': msg.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(secret, msg.id, timestamp, msg.body),
      },
    });
    const timer = setTimeout(() => failed(), opts.timeoutMs);
    req.on('error', (err) => failed(err));
    req.on('response', (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) finish(res.statusCode ?? null, null);
      });
      res.on('end', () => finish(res.statusCode ?? null, null, true));
      res.on('error', () => finish(res.statusCode ?? null, null));
    });
    req.end(msg.body);
  });
}
