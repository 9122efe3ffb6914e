// The disk quota (docs/architecture.md "Disk"): measuring a folder, the near-quota console line once per crossing,
// a real flying-squid server over its plan's disk stopped with reason disk_quota_exceeded and refused a start,
// and a start that a measurement overtakes. Plans come from the runtime's config (test/runtime/helpers.ts
// testPlans: 'small' has 1,024 MB, 'roomy' 4,096); sparse files make a folder big without writing gigabytes. Ports 28600-28649.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { folderBytes } from '../../src/runtime/host/disk-usage';
import { createTestApp } from '../helpers/app';
import { hostPerTest, insertServer, waitAction, waitState } from './helpers';

const MIB = 1024 * 1024;
let nextPort = 28600;

describe('folderBytes', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-disk-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Writes incompressible bytes, so every file system allocates them. */
  function file(rel: string, bytes: number): void {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), crypto.randomBytes(bytes));
  }

  test('counts every file in every folder, without following symbolic links out of it', async () => {
    file('server/world/region/r.0.0.mca', 2 * MIB);
    file('server/world/level.dat', 8192);
    file('server/logs/console.log', 64 * 1024);
    file('outside/huge', 6 * MIB);
    fs.symlinkSync(path.join(dir, 'outside'), path.join(dir, 'server', 'world', 'elsewhere'));
    fs.symlinkSync(path.join(dir, 'outside', 'huge'), path.join(dir, 'server', 'huge-link'));
    fs.symlinkSync('/', path.join(dir, 'server', 'root'));
    const files = 2 * MIB + 8192 + 64 * 1024;
    const bytes = await folderBytes(path.join(dir, 'server'));
    expect(bytes).toBeGreaterThanOrEqual(files);
    expect(bytes).toBeLessThan(files + 64 * 1024); // four folders and three links, a few KiB each at most
  });

  test('a sparse file counts as its length, and a file or a missing path is not a folder', async () => {
    fs.mkdirSync(path.join(dir, 'server'));
    fs.writeFileSync(path.join(dir, 'server', 'holey'), '');
    fs.truncateSync(path.join(dir, 'server', 'holey'), 3 * 1024 * MIB);
    expect(await folderBytes(path.join(dir, 'server'))).toBeGreaterThanOrEqual(3 * 1024 * MIB);
    expect(await folderBytes(path.join(dir, 'server', 'holey'))).toBeNull();
    expect(await folderBytes(path.join(dir, 'missing'))).toBeNull();
  });

  test('stops early when told to', async () => {
    file('server/a', 4096);
    expect(await folderBytes(path.join(dir, 'server'), () => true)).toBeNull();
  });
});

describe('the runtime', () => {
  const t = hostPerTest('disk-quota', { stopTimeoutMs: 10_000 });

  async function installed(software: string, gameVersion: string): Promise<{ id: string; dir: string }> {
    const id = insertServer(t.host.db, { software, gameVersion, port: nextPort++ });
    await t.runtime.lifecycle.install(id);
    return { id, dir: path.join(t.host.dataDir, 'servers', id) };
  }

  /**
   * Makes the server's folder take `mb` MiB more than its install did (a sparse file: its length counts). A stopped
   * server is measured only after a change the service made or saw, so the test says it changed, as a backup or a
   * restore does (DiskWatcher.changed).
   */
  function fill(dir: string, mb: number): void {
    const blob = path.join(dir, 'world', 'blob');
    fs.writeFileSync(blob, '');
    fs.truncateSync(blob, mb * MIB);
    t.runtime.diskWatcher.changed(path.basename(dir));
  }

  const row = (id: string) =>
    t.host.db.prepare('SELECT desired_state, disk_used_bytes FROM servers WHERE id = ?').get(id) as { desired_state: string; disk_used_bytes: number | null };
  /** The server's quota.* events (docs/architecture.md "Events and webhooks"), oldest first. */
  const quotaEvents = (id: string) =>
    (t.host.db.prepare("SELECT type, data FROM events WHERE server_id = ? AND type LIKE 'quota.%' ORDER BY seq").all(id) as { type: string; data: string }[])
      .map((e) => ({ type: e.type, ...(JSON.parse(e.data) as { used_bytes: number; limit_bytes: number }) }));
  const diskLines = (id: string) => t.runtime.consoles.recent(id, 1000).filter((l) => l.stream === 'system' && l.text.startsWith('disk use'));

  test('the console says so once per crossing of 90% of the plan, not on every pass', async () => {
    const { id, dir } = await installed('fake-game', '1.0');
    await t.runtime.diskWatcher.measureNow();
    expect(row(id).disk_used_bytes).toBeLessThan(MIB);
    expect(diskLines(id)).toEqual([]);
    fill(dir, 950); // 1,024 MB plan: 92%
    await t.runtime.diskWatcher.measureNow();
    await t.runtime.diskWatcher.measureNow();
    expect(diskLines(id).map((l) => l.text)).toEqual(['disk use at 92% of 1024 MB']);
    fill(dir, 500);
    await t.runtime.diskWatcher.measureNow();
    fill(dir, 1000);
    await t.runtime.diskWatcher.measureNow();
    expect(diskLines(id).map((l) => l.text)).toEqual(['disk use at 92% of 1024 MB', 'disk use at 97% of 1024 MB']);
    fill(dir, 500);
    await t.runtime.diskWatcher.measureNow();
    fill(dir, 1100); // straight over: said too; a server its owner stopped has nothing more to stop
    await t.runtime.diskWatcher.measureNow();
    expect(diskLines(id).map((l) => l.text).at(-1)).toBe('disk use at 107% of 1024 MB');
    expect(diskLines(id)).toHaveLength(3);
    expect(t.runtime.lifecycle.state(id)).toBe('stopped');
    expect(t.runtime.power.crashes(id)).toEqual([]);
    // One quota.disk_warning per crossing, with the measurement; no quota.disk_exceeded: nothing was stopped.
    const events = quotaEvents(id);
    expect(events.map((e) => [e.type, Math.floor((e.used_bytes / e.limit_bytes) * 100), e.limit_bytes])).toEqual([
      ['quota.disk_warning', 92, 1024 * MIB],
      ['quota.disk_warning', 97, 1024 * MIB],
      ['quota.disk_warning', 107, 1024 * MIB],
    ]);
  });

  test('its backup archives count toward a server\'s disk use', async () => {
    const { id } = await installed('fake-game', '1.0');
    await t.runtime.diskWatcher.measureNow();
    const alone = row(id).disk_used_bytes!;
    const archives = path.join(t.host.dataDir, 'backups', id);
    fs.mkdirSync(archives, { recursive: true });
    fs.writeFileSync(path.join(archives, 'bkp_one.tar.gz'), '');
    fs.truncateSync(path.join(archives, 'bkp_one.tar.gz'), 950 * MIB); // 1,024 MB plan: over 90% with the folder
    t.runtime.diskWatcher.changed(id);
    await t.runtime.diskWatcher.measureNow();
    expect(row(id).disk_used_bytes! - alone).toBeGreaterThanOrEqual(950 * MIB);
    expect(diskLines(id).map((l) => l.text)).toEqual(['disk use at 92% of 1024 MB']);
    expect(quotaEvents(id).map((e) => e.type)).toEqual(['quota.disk_warning']);
    fs.rmSync(archives, { recursive: true });
    t.runtime.diskWatcher.changed(id);
    await t.runtime.diskWatcher.measureNow();
    expect(row(id).disk_used_bytes).toBe(alone); // deleting backups gives the space back
  });

  test('a real server over its plan is stopped with its stop command, recorded, and refused a start until it is under', async () => {
    const { id, dir } = await installed('flying-squid', '1.20.5');
    expect(await waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', 'start').id)).toMatchObject({ status: 'succeeded' });
    fill(dir, 1100);
    await t.runtime.diskWatcher.measureNow();
    await waitState(t.runtime, id, 'stopped');
    await t.runtime.idle();

    const texts = t.runtime.consoles.recent(id, 1000).map((l) => `${l.stream} ${l.text}`);
    const over = texts.findIndex((l) => /^system disk use 11\d\d MB exceeds the plan's 1024 MB; stopping it$/.test(l));
    expect(over).toBeGreaterThanOrEqual(1);
    expect(texts[over - 1]).toMatch(/^system disk use at 10\d% of 1024 MB$/);
    expect(texts.slice(over)).toContain('input stop'); // graceful: the software's own stop command
    expect(texts.slice(over).some((l) => l.startsWith('system did not stop within'))).toBe(false);
    const crashes = t.runtime.power.crashes(id);
    expect(crashes).toHaveLength(1);
    expect(crashes[0]).toMatchObject({ reason: 'disk_quota_exceeded', exit_code: null, signal: null });
    expect(crashes[0].last_lines.at(-1)).toMatch(/exceeds the plan's 1024 MB/);
    expect(row(id).desired_state).toBe('stopped'); // neither reconcile nor the crash policy starts it again
    expect(quotaEvents(id).map((e) => [e.type, e.used_bytes > e.limit_bytes])).toEqual([['quota.disk_warning', true], ['quota.disk_exceeded', true]]);

    for (const type of ['start', 'restart'] as const) {
      expect(() => t.runtime.power.requestAction(id, 'usr_test', type)).toThrow(expect.objectContaining({ code: 'disk_quota_exceeded' }));
    }
    expect(t.runtime.power.listActions(id, { limit: 20 }).data).toHaveLength(1); // only the first start

    fs.rmSync(path.join(dir, 'world', 'blob'));
    await t.runtime.diskWatcher.measureNow();
    expect(await waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', 'start').id)).toMatchObject({ status: 'succeeded' });
    expect(t.runtime.lifecycle.state(id)).toBe('running');
    await waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', 'stop').id);
  }, 90_000);

  test('a start that a measurement overtakes fails with disk_quota_exceeded and never begins', async () => {
    const { id, dir } = await installed('fake-game', '1.0');
    const start = t.runtime.power.requestAction(id, 'usr_test', 'start'); // accepted: not measured yet
    // The action runs on the next turn of the event loop; a pass records the folder over its plan first.
    t.host.db.prepare('UPDATE servers SET disk_used_bytes = ?, disk_measured_at = ? WHERE id = ?').run(1025 * MIB, new Date().toISOString(), id);
    const action = await waitAction(t.runtime, id, start.id);
    expect(action).toMatchObject({ status: 'failed', error: expect.objectContaining({ code: 'disk_quota_exceeded' }) });
    expect(t.runtime.lifecycle.state(id)).toBe('stopped');
    expect(fs.existsSync(dir)).toBe(true);
    expect(t.runtime.consoles.recent(id, 100).some((l) => l.text.includes('starting'))).toBe(false);
  });

  test('a plan with more disk lets an over-quota server start again', async () => {
    const { id, dir } = await installed('fake-game', '1.0');
    fill(dir, 1100);
    await t.runtime.diskWatcher.measureNow();
    expect(() => t.runtime.power.requestAction(id, 'usr_test', 'start')).toThrow(expect.objectContaining({ code: 'disk_quota_exceeded' }));
    t.runtime.lifecycle.update('usr_test', id, { plan: 'roomy' }); // 4,096 MB: the last measurement is within it
    expect(await waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', 'start').id)).toMatchObject({ status: 'succeeded' });
    await waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', 'stop').id);
  });
});

describe('the loop', () => {
  test('DISK_CHECK_INTERVAL_S sets how often every folder is measured, with no call from outside', async () => {
    expect(() => loadConfig({ DISK_CHECK_INTERVAL_S: '0' })).toThrow(/DISK_CHECK_INTERVAL_S/);
    expect(loadConfig({}).diskCheckIntervalMs).toBe(60_000);
    const t = await createTestApp({ env: { DISK_CHECK_INTERVAL_S: '1', GAME_PORT_RANGE: '28640-28649' }, boot: true });
    try {
      const auth = { Authorization: `Bearer ${t.token()}` };
      const created = await t.http.post('/v1/servers').set(auth).send({ name: 'Measured', plan: 'micro', version: 'flying-squid-1.20' });
      expect(created.body.disk_used_mb).toBeNull();
      const deadline = Date.now() + 20_000;
      let server = created.body;
      while (server.disk_used_mb === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        server = (await t.http.get(`/v1/servers/${created.body.id}`).set(auth)).body;
      }
      expect(server).toMatchObject({ state: 'stopped', disk_used_mb: expect.any(Number), disk_measured_at: expect.any(String) });
    } finally {
      await t.finish();
    }
  }, 30_000);
});
