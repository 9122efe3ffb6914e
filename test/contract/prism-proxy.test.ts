// Stoplight Prism's validating proxy in front of the real service (issue 28 "Done when"): every operation on its
// success path (the spec's example request, with the ids of real resources) and on its error paths (no token; an
// id that names nothing; a body that breaks the schema), and the three event streams, pass through it with no
// violation of the answer, and the valid requests with none of the request. Prism reports violations in its
// `sl-violations` header, each located under `request` or `response`.
// Prism reads a whole body before it validates it (every version to 5.16: its forwarder's parseResponse), so a
// stream passes through it only once it ends: the streams here live 2 s (STREAM_MAX_LIFETIME_S).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { utils as sshUtils } from 'ssh2';
import { loadSpec } from '../../src/spec';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const samples = require('../../scripts/spec-samples.js');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const root = path.join(__dirname, '..', '..');
const spec = loadSpec().document as Json;

interface Answer { id: string; path: string; status: number; body: string; violations: Array<{ location: string[]; message: string }> }

let t: TestApp;
let api: { base: string; close(): Promise<void> };
let prism: ChildProcess;
let base: string;
let token: string;
const answers: Array<Answer & { valid: boolean }> = [];

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** A body that is not JSON: a file's bytes, an archive (scripts/spec-samples.js rawBody). */
type Raw = { type: string; data: Buffer };

/**
 * A zip of one stored file whose every byte is below 0x80. Prism keeps a request body as text and forwards it
 * encoded as UTF-8 again, so only such bytes pass through it unchanged; the content is padded until its CRC-32 is
 * such bytes too. Local header, data, central directory, end record (APPNOTE 4.3), DOS host, no attributes: a file.
 */
function asciiZip(name: string, text: string): Buffer {
  let data = Buffer.from(text);
  while (!zlib.crc32(data).toString(16).padStart(8, '0').match(/^([0-7][0-9a-f]){4}$/)) data = Buffer.concat([data, Buffer.from(' ')]);
  const crc = zlib.crc32(data);
  const date = (40 << 9) | (1 << 5) | 1; // 2020-01-01, 00:00
  const file = Buffer.from(name);
  const local = Buffer.alloc(30);
  [[0, 0x04034b50, 4], [4, 20, 2], [12, date, 2], [14, crc, 4], [18, data.length, 4], [22, data.length, 4], [26, file.length, 2]].forEach(([at, v, n]) => local.writeUIntLE(v, at, n));
  const central = Buffer.alloc(46);
  [[0, 0x02014b50, 4], [4, 20, 2], [6, 20, 2], [14, date, 2], [16, crc, 4], [20, data.length, 4], [24, data.length, 4], [28, file.length, 2]].forEach(([at, v, n]) => central.writeUIntLE(v, at, n));
  const end = Buffer.alloc(22);
  const cdAt = local.length + file.length + data.length;
  [[0, 0x06054b50, 4], [8, 1, 2], [10, 1, 2], [12, central.length + file.length, 4], [16, cdAt, 4]].forEach(([at, v, n]) => end.writeUIntLE(v, at, n));
  const zip = Buffer.concat([local, file, data, central, file, end]);
  if (zip.some((b) => b >= 0x80)) throw new Error('the zip has a byte Prism would change');
  return zip;
}

/** One request through Prism; its answer, with the violations Prism found, is kept for the assertions. */
async function via(id: string, method: string, url: string, opts: { headers?: Record<string, string>; body?: unknown; raw?: Raw; auth?: boolean; valid?: boolean } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.auth === false ? {} : { Authorization: `Bearer ${token}` }), ...opts.headers };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.raw) headers['Content-Type'] = opts.raw.type;
  const res = await fetch(base + url, { method, headers, body: opts.raw ? new Uint8Array(opts.raw.data) : opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const body = await res.text();
  const raw = res.headers.get('sl-violations');
  const answer = { id, path: url, status: res.status, body, violations: raw ? JSON.parse(raw.replace(/^Too many violations! /, '')) : [] };
  answers.push({ ...answer, valid: opts.valid !== false && opts.auth !== false });
  return answer;
}

beforeAll(async () => {
  t = await createTestApp({
    boot: true,
    software: path.join(root, 'test', 'runtime', 'fixtures', 'software'),
    // SFTP_PORT: getServerSftp answers it (no SFTP server is started; jest's default is none, a 404).
    env: { STREAM_MAX_LIFETIME_S: '2', METRICS_INTERVAL_S: '1', SFTP_PORT: '2022' },
    runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
    webhooks: { lookup: async () => [{ address: '93.184.215.14', family: 4 }] }, // DNS: createWebhook's example host
  });
  token = t.token();
  api = await t.listen();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prism = spawn(process.execPath, [path.join(root, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'), 'proxy', path.join(root, 'openapi', 'v1.yaml'), api.base, '--port', String(port), '--host', '127.0.0.1', '--cors', 'false', '-v', 'error'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  prism.stderr!.on('data', (d) => (stderr += d));
  await until('Prism to listen', async () => {
    if (prism.exitCode !== null) throw new Error(`prism exited: ${stderr}`);
    return fetch(`${base}/v1/plans`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false);
  }, 60_000);
}, 120_000);

afterAll(async () => {
  if (prism && prism.exitCode === null && prism.signalCode === null) {
    const exited = new Promise((r) => prism.once('exit', r));
    prism.kill();
    const hard = setTimeout(() => prism.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(hard);
  }
  await api?.close();
  await t?.finish();
});

test('every operation and stream, on its success and error paths, passes Prism with no violation', async () => {
  // Real resources for the success paths: a running server of the fake game, its action, a rule, a webhook, a token.
  const server = (await via('createServer', 'POST', '/v1/servers', { body: { name: 'Proxied', plan: 'small', version: 'fake-game-1.0' } })).body;
  const ids: Record<string, string> = { server_id: JSON.parse(server).id, list: 'whitelist', name: 'Steve' };
  await until('the server installed', async () => JSON.parse((await via('getServer', 'GET', `/v1/servers/${ids.server_id}`)).body).state === 'stopped');
  ids.action_id = JSON.parse((await via('createServerAction', 'POST', `/v1/servers/${ids.server_id}/actions`, { body: { type: 'start' } })).body).id;
  await until('the server running', async () => JSON.parse((await via('getServer', 'GET', `/v1/servers/${ids.server_id}`)).body).state === 'running');
  ids.alert_id = JSON.parse((await via('createServerAlertRule', 'POST', `/v1/servers/${ids.server_id}/alerts`, { body: { kind: 'crash' } })).body).id;
  ids.webhook_id = JSON.parse((await via('createWebhook', 'POST', '/v1/webhooks', { body: { url: 'https://hooks.example.com/gsh', event_types: ['server.crashed'] } })).body).id;
  ids.token_id = JSON.parse((await via('createToken', 'POST', '/v1/tokens', { body: { name: 'spare', scopes: ['servers:read'] } })).body).id;
  ids.member_id = JSON.parse((await via('createServerMember', 'POST', `/v1/servers/${ids.server_id}/members`, { body: { email: 'proxied@example.com', permissions: ['console'] } })).body).id;
  const schedule = { name: 'Proxied', cron: '0 4 * * *', tasks: [{ type: 'command', command: 'say hello' }] };
  ids.schedule_id = JSON.parse((await via('createServerSchedule', 'POST', `/v1/servers/${ids.server_id}/schedules`, { body: schedule })).body).id;
  ids.run_id = JSON.parse((await via('runServerSchedule', 'POST', `/v1/servers/${ids.server_id}/schedules/${ids.schedule_id}/run`)).body).id;
  await t.runtime.idle(); // the run ended, so the example's run may begin
  // Player lists, settings and backups are flying-squid's (the fake game has none): a second server, installed, not
  // started, with a backup (of a world not made yet, so it fails: still a backup to read and delete).
  const squid = JSON.parse((await via('createServer', 'POST', '/v1/servers', { body: { name: 'Squid', plan: 'small', version: 'flying-squid-1.20.5' } })).body).id;
  await until('the second server installed', async () => JSON.parse((await via('getServer', 'GET', `/v1/servers/${squid}`)).body).state === 'stopped');
  ids.backup_id = JSON.parse((await via('createServerBackup', 'POST', `/v1/servers/${squid}/backups`, { body: { name: 'first' } })).body).id;
  await until('the backup done', async () => JSON.parse((await via('getServerBackup', 'GET', `/v1/servers/${squid}/backups/${ids.backup_id}`)).body).status !== 'pending');
  const serverOf = (template: string) => (/\/(players\/\{list\}|settings|backups)/.test(template) ? squid : ids.server_id);
  // An SSH key other than createSshKey's example; the file the Files examples read (world/level.dat), and the
  // bodies a reader's files would be: the upload's bytes, the world import's zip (MyWorld/level.dat…), each of
  // bytes Prism passes unchanged (asciiZip).
  const sshKey = sshUtils.generateKeyPairSync('ed25519').public;
  ids.ssh_key_id = JSON.parse((await via('createSshKey', 'POST', '/v1/ssh-keys', { body: { public_key: sshKey, name: 'proxied' } })).body).id;
  const files = `/v1/servers/${ids.server_id}/files`;
  const octets = (text: string): Raw => ({ type: 'application/octet-stream', data: Buffer.from(text) });
  expect((await via('uploadServerFile', 'PUT', `${files}/content?path=world%2Flevel.dat`, { raw: octets('a world') })).status).toBe(201);
  const imported = asciiZip('MyWorld/level.dat', 'an imported world');
  const rawBodies: Record<string, Raw> = { 'server-icon.png': octets('an icon'), 'MyWorld.zip': { type: 'application/zip', data: imported } };

  // Deletes last, and the server's own delete after its rules', entries' and backups'.
  const order = (r: Json) => (r.method !== 'DELETE' ? 0 : r.operationId === 'deleteServer' ? 2 : 1);
  const requests: Json[] = samples
    .operations(spec)
    .map((o: Json) => samples.exampleRequest(spec, o))
    .sort((a: Json, b: Json) => order(a) - order(b));
  // The Files answers the examples do not ask for, once the world import is in place (before the deletions): a part
  // of a file (206), a range past its end (416), a create-only upload of a file that exists (412).
  const beyondExamples = async () => {
    const level = `${files}/content?path=world%2Flevel.dat`;
    expect((await via('downloadServerFile', 'GET', level, { headers: { Range: 'bytes=3-16' } })).body).toBe('imported world');
    expect((await via('downloadServerFile', 'GET', level, { headers: { Range: 'bytes=1000-' }, valid: false })).status).toBe(416);
    expect((await via('uploadServerFile', 'PUT', level, { headers: { 'If-None-Match': '*' }, raw: octets('another world'), valid: false })).status).toBe(412);
  };
  for (const req of requests) {
    const real: Record<string, string> = { ...ids, server_id: serverOf(req.template) };
    const params = { ...req.pathParams, ...Object.fromEntries(Object.keys(req.pathParams).filter((k) => real[k]).map((k) => [k, real[k]])) };
    const url = (p: Record<string, string>) => req.template.replace(/\{(\w+)\}/g, (_: string, k: string) => encodeURIComponent(p[k])) + (Object.keys(req.query).length ? `?${new URLSearchParams(req.query)}` : '');
    const headers = { ...req.headers, ...(req.headers['Idempotency-Key'] ? { 'Idempotency-Key': crypto.randomUUID() } : {}) };
    // Error paths first, while what the success path deletes is still there: no token, then an id that names nothing,
    // then (for a body) a field the schema does not have.
    const raw = req.raw && rawBodies[req.raw.file];
    await via(req.operationId, req.method, url(params), { headers, body: req.body, raw, auth: false });
    const missing = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, /^[a-z]{3}_/.test(String(v)) ? `${String(v).slice(0, 4)}0000000000` : String(v)]));
    if (Object.values(params).some((v) => /^[a-z]{3}_/.test(String(v)))) await via(req.operationId, req.method, url(missing), { headers, body: req.body, raw, valid: false });
    if (req.body !== undefined) await via(req.operationId, req.method, url(params), { headers: { ...headers, 'Idempotency-Key': crypto.randomUUID() }, body: { not_in_the_spec: true }, valid: false });
    await via(req.operationId, req.method, url(params), { headers, body: req.body, raw });
    if (req.operationId === 'extractServerArchive') await beyondExamples();
  }
  const byOperation = new Map<string, number[]>();
  for (const a of answers) byOperation.set(a.id, [...(byOperation.get(a.id) ?? []), a.status]);
  expect(byOperation.size).toBe(requests.length);
  // Every operation answered at least once with success, and the error paths answered 401, 404 and 400.
  const succeeded = [...byOperation].filter(([, s]) => s.some((x) => x >= 200 && x < 300)).map(([id]) => id);
  // Not here: who is online and a kick (the fake game reports no players), the server-list status (the fake game
  // answers no status ping; test/integration/server-status.test.ts pings a real one) and kept backups (no server was
  // deleted keeping its backups).
  expect([...byOperation.keys()].filter((id) => !succeeded.includes(id))).toEqual(['listServerPlayers', 'getServerStatus', 'kickServerPlayer', 'getKeptBackup', 'getKeptBackupArchive', 'deleteKeptBackup']);
  for (const id of ['streamServerConsole', 'streamServerMetrics', 'streamEvents']) expect(byOperation.get(id)).toContain(200);
  for (const status of [400, 401, 404]) expect(answers.map((a) => a.status)).toContain(status);

  const responseViolations = answers.flatMap((a) => a.violations.filter((v) => v.location[0] === 'response').map((v) => `${a.id} ${a.path} → ${a.status}: ${v.location.join('.')} ${v.message}`));
  const requestViolations = answers.filter((a) => a.valid).flatMap((a) => a.violations.filter((v) => v.location[0] === 'request').map((v) => `${a.id} ${a.path}: ${v.location.join('.')} ${v.message}`));
  expect(responseViolations).toEqual([]);
  expect(requestViolations).toEqual([]);
}, 300_000);
