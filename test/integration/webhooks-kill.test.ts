import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { openDb } from '../../src/store/db';
import { createStore } from '../../src/store';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { serviceActor } from '../../src/actors';

/**
 * At least once across kill -9 (docs/architecture.md "Events and webhooks"): a dispatcher process killed with
 * SIGKILL mid-delivery loses no event, and a second one repeats at most the one that was in flight; the server's
 * events still arrive in order.
 */

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function dispatcher(dbFile: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'dispatcher.cjs'), dbFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the dispatcher exited with ${code}`)));
  });
}

test('kill -9 mid-delivery: every event arrives, in order, and only the one in flight twice', async () => {
  const received: string[] = [];
  // Each answer takes 30 ms, so the kill lands while a request is open or its outcome is being written.
  const rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers['webhook-id'] as string);
      setTimeout(() => res.writeHead(204).end(), 30);
    });
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  const dir = tempDir('webhooks-kill');
  const dbFile = path.join(dir, 'gsh.sqlite');
  const db = openDb(dbFile);
  try {
    const store = createStore(db, systemClock, { host: '127.0.0.1', portRange: [29100, 29149] }, { defaults: { servers: 10, running: 10, memory_mb: 100_000 }, plans }, () => serviceActor('operator'));
    const userId = store.users.ensure('owner@example.com').id;
    const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
    store.webhooks.create(userId, { url, event_types: ['server.state_changed'] }, 10);
    const sent = Array.from({ length: 60 }, () => store.events.raise('server.state_changed', { from: 'stopped', to: 'starting' }, { userId, serverId: 'srv_killed' })!.id);

    const first = await dispatcher(dbFile);
    await until('some deliveries', () => received.length >= 15, 20_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const atKill = received.length;
    await dispatcher(dbFile);
    await until('every event', () => new Set(received).size === sent.length, 30_000);

    expect(atKill).toBeLessThan(sent.length); // the kill was mid-way
    const inOrder = received.filter((id, i) => id !== received[i - 1]);
    expect(inOrder).toEqual(sent);
    expect(received.length - sent.length).toBeLessThanOrEqual(1);
    const pending = db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status != 'succeeded'").pluck();
    await until('every outcome recorded', () => pending.get() === 0, 10_000);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
    rx.closeAllConnections();
    await new Promise((r) => rx.close(r));
  }
}, 90_000);
