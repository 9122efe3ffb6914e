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
}

/**
 * Keep-alive agents, one per URL origin and resolved address, so a busy receiver is not paid a new TCP (and TLS)
 * handshake per delivery. The address is part of the key: a connection is only reused for the address this
 * attempt resolved and checked (DNS rebinding, SECURITY.md), never for one an earlier answer gave. At most `max`
 * agents are kept, the least recently used destroyed first; an idle connection is closed after `idleMs`.
 */
export function createAgents(opts: { max: number; socketsPerAgent: number; idleMs: number }) {
  const agents = new Map<string, http.Agent>();
  return {
    get(url: URL, address: string): http.Agent {
      const key = `${url.protocol}//${url.host} ${address}`;
      let agent = agents.get(key);
      if (agent) {
        agents.delete(key); // re-inserted last: the Map's order is least recently used first
      } else {
        const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
        agent = new Agent({ keepAlive: true, maxSockets: opts.socketsPerAgent, maxFreeSockets: opts.socketsPerAgent, timeout: opts.idleMs, scheduling: 'lifo' });
        if (agents.size >= opts.max) {
          const [oldest, old] = agents.entries().next().value as [string, http.Agent];
          agents.delete(oldest);
          old.destroy();
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
    const req = client.request(url, {
      method: 'POST',
      lookup: pinned,
      agent: opts.agents ? opts.agents.get(parsed, target.address) : false,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'gsh-webhooks/1',
        'webhook-id': msg.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(secret, msg.id, timestamp, msg.body),
      },
    });
    const timer = setTimeout(() => finish(null, `timeout: no complete answer within ${opts.timeoutMs} ms`), opts.timeoutMs);
    req.on('error', (err) => finish(null, err.message));
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
