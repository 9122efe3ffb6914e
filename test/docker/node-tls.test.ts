// Node links over mutual TLS (issue 41 §1; README "Nodes"): a second engine started by scripts/docker-node.sh with
// --tlsverify on an address of the bridge the script makes (this machine only). `gsh node add --make-certs` makes the
// CA and both certificates and says what goes on the node; once the engine runs with them the same add takes it,
// and the service creates, starts and stops a game through it. A client without a certificate, or with one of another
// CA, is refused by the engine; an engine whose certificate another CA signed is refused by the service; a plain
// tcp:// engine on the bridge is refused without --insecure, and every start warns of one added with it. A rotation
// while the game runs leaves it running and the service talking to the node, and the engine client reads the new
// files for new connections; a new server certificate is read by dockerd at a restart, which the game outlives
// with --live-restore (the same container, never restarted, adopted again). The engine and bridge are stopped by their folder. Ports 29200-29209.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import tls from 'node:tls';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDb } from '../../src/store/db';
import { createOperatorStore } from '../../src/store';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { createEngine } from '../../src/runtime/host/docker/engine';
import { makeNodeCerts } from '../../src/node-certs';
import { loadConfig } from '../../src/config';
import { pingPlayers } from '../../src/runtime/server/probes';
import { createTestApp, tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { containersOf, FIRST_IMAGE_MS, gsh, REMOVAL_MS, removeContainersOf } from './engine';

const run = promisify(execFile);
const script = path.join(__dirname, '..', '..', 'scripts', 'docker-node.sh');
const PORT = 23_761;
const engineDir = fs.mkdtempSync('/tmp/gsh-tls-'); // short: the engine's unix socket path is at most 107 bytes
const dataDir = tempDir('node-tls');
const other = tempDir('node-tls-other'); // a CA and certificates the node never heard of
const good = tempDir('node-tls-good'); // a copy of the service's client side, kept after `node remove`
let address: string;
let url: string;
const certs = (...f: string[]) => path.join(dataDir, 'nodes', 'two', ...f);
const unixEngine = createEngine(`unix://${engineDir}/docker.sock`);

beforeAll(async () => {
  address = (await run('bash', [script, 'address', engineDir])).stdout.trim();
  expect(address).toMatch(/^172\.31\.\d+\.1$/);
  url = `tcp://${address}:${PORT}`;
  makeNodeCerts(other, 'other', address);
}, 60_000);

afterAll(async () => {
  // An engine left halted by a failure is started again (plain, without --live-restore) to remove what runs there.
  await run('bash', [script, 'start', engineDir], { timeout: 120_000 }).catch(() => undefined);
  await removeContainersOf(dataDir, unixEngine).catch(() => undefined);
  await run('bash', [script, 'stop', engineDir], { timeout: 120_000 });
  for (const d of [engineDir, dataDir, other, good]) fs.rmSync(d, { recursive: true, force: true });
}, 180_000);

/** The serial of the certificate the engine presents now. */
function peerSerial(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: address, port: PORT, rejectUnauthorized: false, cert: fs.readFileSync(certs('cert.pem')), key: fs.readFileSync(certs('key.pem')) }, () => {
      resolve(socket.getPeerCertificate().serialNumber.toLowerCase());
      socket.end();
    });
    socket.on('error', reject);
  });
}

const serialOf = (file: string) => new crypto.X509Certificate(fs.readFileSync(file)).serialNumber.toLowerCase();

/** A request to the engine with these TLS options; resolves with the status, rejects when the handshake fails. */
function ask(options: https.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: address, port: PORT, path: '/v1.41/version', ...options }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

test('plain tcp:// on the bridge is refused without --insecure; --make-certs says what goes on the node', async () => {
  const plain = await gsh(dataDir, 'node', 'add', '--name', 'plain', '--docker-host', url);
  expect(plain.code).toBe(2);
  expect(plain.out).toMatch(/plain TCP off loopback.*root on the node.*--insecure/s);
  // --insecure lifts the refusal; this engine speaks only TLS there, so it does not answer plain HTTP.
  const insecure = await gsh(dataDir, 'node', 'add', '--name', 'plain', '--docker-host', url, '--insecure');
  expect(insecure.code).toBe(1);
  expect(insecure.out).toMatch(/did not answer.*nothing was added/);

  const made = await gsh(dataDir, 'node', 'add', '--name', 'two', '--docker-host', url, '--make-certs', '--public-host', '127.0.0.1', '--memory-mb', '800', '--ports', '29200-29209');
  expect(made.code).toBe(1); // the engine does not run with them yet
  expect(made.out).toContain(`copy ${certs('node', 'ca.pem')} ${certs('node', 'server-cert.pem')} ${certs('node', 'server-key.pem')}`);
  expect(made.out).toContain(`--tlsverify --tlscacert=/etc/docker/tls/ca.pem --tlscert=/etc/docker/tls/server-cert.pem --tlskey=/etc/docker/tls/server-key.pem -H tcp://${address}:${PORT}`);
  expect(made.out).toMatch(/nothing was added\. Run this command again/);
  expect((await gsh(dataDir, 'node', 'list')).out).toMatch(/^No nodes/);
  for (const key of [certs('key.pem'), certs('ca-key.pem'), certs('node', 'server-key.pem')]) expect(fs.statSync(key).mode & 0o777).toBe(0o600);
  expect(fs.statSync(certs()).mode & 0o777).toBe(0o700);
}, 60_000);

test('the engine refuses clients without the right certificate; the service refuses an engine of another CA', async () => {
  await run('bash', [script, 'start', engineDir, '--tls', certs('node'), String(PORT), '--live-restore'], { timeout: 120_000 });
  for (const f of ['ca.pem', 'cert.pem', 'key.pem']) fs.copyFileSync(certs(f), path.join(good, f));
  const ca = fs.readFileSync(certs('ca.pem'));
  expect(await ask({ ca, cert: fs.readFileSync(certs('cert.pem')), key: fs.readFileSync(certs('key.pem')) })).toBe(200);
  // No client certificate, one of another CA: the handshake fails (dockerd's --tlsverify requires and checks one).
  await expect(ask({ ca })).rejects.toThrow();
  await expect(ask({ ca, cert: fs.readFileSync(path.join(other, 'cert.pem')), key: fs.readFileSync(path.join(other, 'key.pem')) })).rejects.toThrow();
  // Plain HTTP gets no API, only Go's "client sent an HTTP request to an HTTPS server".
  const plainStatus = await new Promise<number>((resolve, reject) => {
    http.get({ host: address, port: PORT, path: '/v1.41/version' }, (res) => resolve(res.statusCode ?? 0)).on('error', reject);
  });
  expect(plainStatus).toBe(400);

  // The node's certificate checked against another CA: refused, with what is wrong, and nothing written.
  const wrong = await gsh(dataDir, 'node', 'add', '--name', 'wrong', '--docker-host', url,
    '--tls-ca', path.join(other, 'ca.pem'), '--tls-cert', certs('cert.pem'), '--tls-key', certs('key.pem'));
  expect(wrong.code).toBe(1);
  expect(wrong.out).toMatch(/not signed by the CA in ca\.pem.*nothing was added/);
  expect(fs.existsSync(path.join(dataDir, 'nodes', 'wrong'))).toBe(false);
  expect(fs.readdirSync(path.join(dataDir, 'nodes')).filter((f) => f.startsWith('.'))).toEqual([]);
}, 180_000);

test('added over TLS, the service runs a game through it; a rotation keeps it running and the link working', async () => {
  const added = await gsh(dataDir, 'node', 'add', '--name', 'two', '--docker-host', url, '--make-certs', '--public-host', '127.0.0.1', '--memory-mb', '800', '--ports', '29200-29209');
  expect(added.out).toMatch(/Using the certificates made before.*Added node two: engine tcp:\/\/\S+ over mutual TLS/s);
  expect(added.code).toBe(0);
  const app = await createTestApp({
    boot: true,
    env: { DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST: `unix://${engineDir}/none.sock`, NODE_CHECK_INTERVAL_S: '1' }, // every call goes to node two, over TLS
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  try {
    const auth = { Authorization: `Bearer ${app.token('tls@example.com')}` };
    const get = async (id: string) => (await app.http.get(`/v1/servers/${id}`).set(auth)).body as { state: string; address: { host: string; port: number } };
    const act = (id: string, type: string) => app.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type });
    const created = await app.http.post('/v1/servers').set(auth).send({ name: 'T', plan: 'micro', version: 'flying-squid-1.20' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until('installed', async () => (await get(id)).state === 'stopped', FIRST_IMAGE_MS);
    expect((await act(id, 'start')).status).toBe(202);
    await until('running', async () => (await get(id)).state === 'running', 150_000);
    const { address: at } = await get(id);
    expect(at.port).toBeGreaterThanOrEqual(29200);
    expect((await pingPlayers(at.host, at.port)).max).toBeGreaterThan(0);
    const [container] = await containersOf(dataDir, unixEngine);
    expect(container.State).toBe('running');

    // A rotation whose files the engine does not take changes nothing.
    const refused = await gsh(dataDir, 'node', 'certs', 'rotate', 'two', '--tls-ca', certs('ca.pem'),
      '--tls-cert', path.join(other, 'cert.pem'), '--tls-key', path.join(other, 'key.pem'));
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/did not take the new material \(the engine refused this client certificate .*\); the current one stays/);
    const before = fs.readFileSync(certs('cert.pem'), 'utf8');
    const rotated = await gsh(dataDir, 'node', 'certs', 'rotate', 'two');
    expect(rotated.out).toMatch(/new client certificate \(serial \w+…, valid until .*\)\. New connections use it/);
    expect(rotated.code).toBe(0);
    expect(fs.readFileSync(certs('cert.pem'), 'utf8')).not.toBe(before);
    expect(fs.statSync(certs('key.pem')).mode & 0o777).toBe(0o600);
    // The game never stopped: same container, still running, players still answered.
    expect((await containersOf(dataDir, unixEngine)).map((c) => [c.Id, c.State])).toEqual([[container.Id, 'running']]);
    expect((await get(id)).state).toBe('running');
    expect((await pingPlayers(at.host, at.port)).max).toBeGreaterThan(0);
    // And the service still talks to the node: it stops and starts the game there.
    expect((await act(id, 'stop')).status).toBe(202);
    await until('stopped', async () => (await get(id)).state === 'stopped', 60_000);
    expect((await containersOf(dataDir, unixEngine)).every((c) => c.State !== 'running')).toBe(true);
    expect((await act(id, 'start')).status).toBe(202);
    await until('running again', async () => (await get(id)).state === 'running', 150_000);

    // A new server certificate from the same CA: dockerd reads it when it starts again, and with --live-restore the
    // game outlives the restart; the service adopts it again once the engine answers with the new certificate.
    const reissued = await gsh(dataDir, 'node', 'certs', 'rotate', 'two', '--server');
    expect(reissued.out).toMatch(/new server certificate.*restart dockerd/s);
    expect(reissued.code).toBe(0);
    const [game] = await containersOf(dataDir, unixEngine);
    const startedAt = (await unixEngine.json<{ State: { StartedAt: string } }>('GET', `/containers/${game.Id}/json`)).State.StartedAt;
    await run('bash', [script, 'halt', engineDir], { timeout: 120_000 });
    await until('unreachable', async () => (await get(id)).state === 'unreachable', 30_000);
    await run('bash', [script, 'start', engineDir, '--tls', certs('node'), String(PORT), '--live-restore'], { timeout: 120_000 });
    expect(await peerSerial()).toBe(serialOf(certs('node', 'server-cert.pem')));
    await until('adopted', async () => (await get(id)).state === 'running', 60_000);
    const after = (await unixEngine.json<{ State: { StartedAt: string } }>('GET', `/containers/${game.Id}/json`)).State.StartedAt;
    expect(after).toBe(startedAt); // the same process, never restarted
    expect((await pingPlayers(at.host, at.port)).max).toBeGreaterThan(0);

    expect((await app.http.delete(`/v1/servers/${id}`).set(auth)).status).toBe(202);
    await until('deleted', async () => (await app.http.get(`/v1/servers/${id}`).set(auth)).status === 404, REMOVAL_MS);
    expect(await containersOf(dataDir, unixEngine)).toEqual([]);
  } finally {
    await app.finish();
  }
  expect((await gsh(dataDir, 'node', 'remove', 'two')).code).toBe(0);
  expect(fs.existsSync(certs())).toBe(false);
}, FIRST_IMAGE_MS + 600_000); // the boot builds the game image on this engine, cold

test('the engine client reads the certificate folder again for new connections', async () => {
  const dir = tempDir('node-tls-client');
  try {
    for (const f of ['ca.pem', 'cert.pem', 'key.pem']) fs.copyFileSync(path.join(other, f), path.join(dir, f));
    const client = createEngine(url, { certDir: dir });
    await expect(client.json('GET', '/version', undefined, 5_000)).rejects.toThrow(); // another CA: refused
    // The node's CA and a client certificate of it put in place: the same client's next connection works.
    for (const f of ['ca.pem', 'cert.pem', 'key.pem']) fs.copyFileSync(path.join(good, f), path.join(dir, f));
    expect(await client.json('GET', '/version', undefined, 5_000)).toHaveProperty('ApiVersion');
    // A certificate that does not match the key (a rotation half done) keeps the last good set.
    fs.copyFileSync(path.join(other, 'cert.pem'), path.join(dir, 'cert.pem'));
    expect(await client.json('GET', '/version', undefined, 5_000)).toHaveProperty('ApiVersion');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test('every start warns of a node added with --insecure', async () => {
  // What `node add --insecure` writes for an engine that answers plain HTTP off loopback (this one speaks only TLS).
  const config = loadConfig({ DATA_DIR: dataDir });
  const db = openDb(config.dbFile);
  createOperatorStore(db, systemClock, { defaults: config.quotas, plans }).nodes.add({ name: 'open', dockerHost: url, publicHost: '127.0.0.1', memoryMb: 800, ports: [29200, 29209] });
  db.close();
  const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
  const logger = { info: () => undefined, error: () => undefined, warn: (msg: string, fields?: Record<string, unknown>) => void warnings.push({ msg, fields }) };
  const app = await createTestApp({ env: { DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST: `unix://${engineDir}/docker.sock` }, logger, boot: true });
  await app.finish();
  expect(warnings).toContainEqual({ msg: expect.stringMatching(/plain TCP without TLS.*root/), fields: { node: 'open', docker_host: url } });
}, 120_000);
