import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { sendOnce } from '../../src/webhooks/send';
import type { Lookup } from '../../src/webhooks/address';

/**
 * What a failed delivery records (SECURITY.md, SSRF): what a receiver's owner needs, and nothing that tells how a
 * connection failed. A closed port, a port that accepts and says nothing, one that hangs up and one that speaks
 * something else must look the same, in the error text, the duration and the time the outcome is known; otherwise
 * webhooks are a port scanner run from this service's address. Real sockets on loopback.
 */
const TIMEOUT_MS = 400;
const closers: Array<() => void> = [];
afterAll(() => closers.forEach((c) => c()));

/** A TCP server on an ephemeral loopback port doing `onSocket` to every connection; its URL. */
async function tcp(onSocket: (s: net.Socket) => void): Promise<string> {
  const server = net.createServer(onSocket);
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (sockets.forEach((s) => s.destroy()), server.close()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function closedPort(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}/hook`;
}

async function answering(status: number): Promise<string> {
  const server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(status).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (server.closeAllConnections(), server.close()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

const lookup: Lookup = async () => [];
const send = (url: string) =>
  sendOnce(url, 'whsec_c2VjcmV0', { id: 'evt_1', body: '{}' }, { allowPrivate: true, lookup, timeoutMs: TIMEOUT_MS, now: () => Date.now() });

const NO_ANSWER = `no answer within ${TIMEOUT_MS} ms: the connection failed or the receiver did not answer in time`;

describe('failures without an answer look alike', () => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['a closed port (connection refused)', closedPort],
    ['a port that accepts and never answers (timeout)', () => tcp(() => undefined)],
    ['a port that accepts and hangs up at once (reset)', () => tcp((s) => s.destroy())],
    ['a port that speaks another protocol (SSH banner)', () => tcp((s) => s.end('SSH-2.0-OpenSSH_9.2\r\n'))],
  ];
  test.each(cases)('%s', async (_name, target) => {
    const url = await target();
    const t0 = Date.now();
    const outcome = await send(url);
    expect(outcome).toMatchObject({ status: null, error: NO_ANSWER, durationMs: TIMEOUT_MS });
    // Known only once the time limit has passed, whatever happened: the outcome's time tells nothing either.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });
});

describe('what the owner needs is still said', () => {
  const cases: Array<[string, { url: () => Promise<string>; want: { status: number | null; error: string | RegExp | null } }]> = [
    ['an answer: its status', { url: () => answering(503), want: { status: 503, error: null } }],
    ['a 2xx', { url: () => answering(204), want: { status: 204, error: null } }],
    ['a name that does not resolve', { url: async () => 'http://nowhere.example.com/hook', want: { status: null, error: /^refused: nowhere\.example\.com does not resolve/ } }],
  ];
  test.each(cases)('%s', async (_name, { url, want }) => {
    const outcome = await send(await url());
    expect(outcome.status).toBe(want.status);
    if (typeof want.error === 'string' || want.error === null) expect(outcome.error).toBe(want.error);
    else expect(outcome.error).toMatch(want.error);
  });
});
