// What a registered server costs while nothing happens to it (issue 32; docs/architecture.md "At scale"): boot and
// the reconcile loop act only on the servers whose observed state is off their desired one, a door (supervisor,
// console) lives only while its server is in play, and the disk watcher measures a stopped server once after it
// stops and again only once something changes its files. Real games (the fake-game fixture), a real SQLite file.
// Ports 29700-29719.
import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { createDiskWatcher } from '../../src/runtime/loops/disk-watcher';
import type { CrashPolicy } from '../../src/runtime/server/crash-policy';
import type { Doors } from '../../src/runtime/server/doors';
import { serviceActor } from '../../src/actors';
import { createStore } from '../../src/store';
import { silentLogger } from '../../src/log';
import { createTestHost, hostPerTest, insertServer, waitAction, waitFor, waitState, type TestHost } from './helpers';
import type { Runtime } from '../../src/service';

let nextPort = 29700;

const measuredAt = (db: TestHost['db'], id: string) =>
  db.prepare('SELECT disk_used_bytes AS bytes, disk_measured_at AS at FROM servers WHERE id = ?').get(id) as { bytes: number | null; at: string | null };

/** One disk watcher pass, a few milliseconds after the last, so a new measurement has a new time. */
async function pass(runtime: Runtime): Promise<void> {
  await new Promise((r) => setTimeout(r, 5));
  await runtime.diskWatcher.measureNow();
}

describe('boot and the reconcile loop', () => {
  let host: TestHost;
  let runtime: Runtime | undefined;
  beforeEach(() => (host = createTestHost('idle-boot')));
  afterEach(async () => {
    await runtime?.close();
    host.cleanup();
    expect(host.errors).toEqual([]);
  }, 60_000);

  test('only a server off its desired state gets a door: 300 stopped ones cost none, the one meant to run is started', async () => {
    // Never started here, so their ports are only numbers: none is bound.
    const stopped = Array.from({ length: 300 }, (_, i) => insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: 60000 + i }));
    host.db.prepare("UPDATE servers SET state = 'stopped'").run();
    const wanted = insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: nextPort++ });
    const previous = host.newRuntime();
    await previous.start();
    await previous.lifecycle.install(wanted);
    await previous.close();
    // The previous life accepted a start and was killed before it launched: stopped on disk, desired running.
    host.db.prepare("UPDATE servers SET desired_state = 'running' WHERE id = ?").run(wanted);

    runtime = host.newRuntime();
    await runtime.start();
    await waitState(runtime, wanted, 'running');
    expect(runtime.doors.size().doors).toBe(1);
    expect(runtime.doors.all().map((d) => d.id)).toEqual([wanted]);
    expect(stopped.every((id) => runtime!.lifecycle.state(id) === 'stopped')).toBe(true); // reads through a door, made now
  }, 60_000);
});

describe('doors and disk', () => {
  const t = hostPerTest('idle-servers', { reconcileMs: 100 });

  async function installed(software = 'fake-game', gameVersion = '1.0'): Promise<string> {
    const id = insertServer(t.host.db, { software, gameVersion, port: nextPort++ });
    await t.runtime.lifecycle.install(id);
    return id;
  }
  const act = async (id: string, type: 'start' | 'stop') => waitAction(t.runtime, id, t.runtime.power.requestAction(id, 'usr_test', type).id);

  test('a settled server\'s door goes at the next pass; its console of this life stays, and its next door goes on from it', async () => {
    const id = await installed();
    expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
    expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
    const lines = t.runtime.consoles.recent(id, 1000);
    expect(lines.map((l) => l.text)).toContain('state stopping → stopped (exited)');
    await waitFor('the door to go', () => t.runtime.doors.size().doors === 0);
    expect(t.runtime.doors.size().consoles).toBe(1);
    expect(t.runtime.consoles.recent(id, 1000)).toEqual(lines); // getServerConsole: this life's lines
    expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
    const next = t.runtime.consoles.recent(id, 1000);
    expect(next.slice(0, lines.length)).toEqual(lines);
    expect(next[lines.length].seq).toBe(lines.at(-1)!.seq + 1); // one numbering per life, across doors
    expect(t.runtime.doors.size()).toEqual({ doors: 1, consoles: 0 });
    await act(id, 'stop');
  });

  test('the reconcile loop acts on a server whose state changed off its desired one: a start refused, then allowed', async () => {
    const id = await installed();
    const over = (1024 + 1) * 1024 * 1024; // the test plan 'small' has 1,024 MB
    const start = t.runtime.power.requestAction(id, 'usr_test', 'start'); // accepted: not measured yet
    // A measurement over the plan lands before the start runs: the launch is refused, the server stays stopped.
    t.host.db.prepare('UPDATE servers SET disk_used_bytes = ?, disk_measured_at = ? WHERE id = ?').run(over, new Date().toISOString(), id);
    expect(await waitAction(t.runtime, id, start.id)).toMatchObject({ status: 'failed', error: { code: 'disk_quota_exceeded' } });
    expect(t.host.db.prepare('SELECT state, desired_state FROM servers WHERE id = ?').get(id)).toEqual({ state: 'stopped', desired_state: 'running' });
    await new Promise((r) => setTimeout(r, 300)); // three reconcile passes: each tries, and the launch is refused again
    expect(t.runtime.lifecycle.state(id)).toBe('stopped');
    t.runtime.diskWatcher.changed(id); // say, a backup deleted: the next pass measures it, within its plan
    await pass(t.runtime);
    await waitState(t.runtime, id, 'running'); // no action: the loop saw the gap and closed it
    expect(t.runtime.power.listActions(id, { limit: 10 }).data).toHaveLength(1);
    await act(id, 'stop');
  });

  test('a stopped server is measured once after it stops, and again only when its files change through the API', async () => {
    const id = await installed('flying-squid', '1.20.5'); // an install only: no game is started here
    await pass(t.runtime);
    const first = measuredAt(t.host.db, id);
    expect(first.bytes).toBeGreaterThan(0);
    const world = path.join(t.host.dataDir, 'servers', id, 'world');
    fs.writeFileSync(path.join(world, 'behind-its-back'), Buffer.alloc(3 * 1024 * 1024, 1));
    await pass(t.runtime);
    await pass(t.runtime);
    expect(measuredAt(t.host.db, id)).toEqual(first); // nothing the service did changed it: not walked again

    const backup = t.runtime.backups.create(id, 'through the API');
    await waitFor('the backup', () => t.runtime.backups.get(id, backup.id).status === 'ready');
    await pass(t.runtime);
    const after = measuredAt(t.host.db, id);
    const archive = t.runtime.backups.get(id, backup.id).size_bytes!;
    expect(after.at! > first.at!).toBe(true);
    expect(after.bytes! - first.bytes!).toBeGreaterThanOrEqual(3 * 1024 * 1024 + archive);
    await pass(t.runtime);
    expect(measuredAt(t.host.db, id)).toEqual(after);
  });

  test('a running server is measured on every pass, then once after it stops', async () => {
    const id = await installed();
    expect(await act(id, 'start')).toMatchObject({ status: 'succeeded' });
    const times: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      await pass(t.runtime);
      times.push(measuredAt(t.host.db, id).at);
    }
    expect(new Set(times).size).toBe(3);
    expect(await act(id, 'stop')).toMatchObject({ status: 'succeeded' });
    await pass(t.runtime);
    const stopped = measuredAt(t.host.db, id).at;
    expect(stopped! > times[2]!).toBe(true);
    await pass(t.runtime);
    expect(measuredAt(t.host.db, id).at).toBe(stopped);
  });
});

test('a pass records after its walk, in a transaction; a change made during the walk leaves the server to measure again', async () => {
  const host = createTestHost('disk-walk');
  try {
    const store = createStore(host.db, systemClock, { host: '127.0.0.1', portRange: [29700, 29719] }, { defaults: { servers: 10, running: 10, memory_mb: 100_000 }, plans }, () => serviceActor('operator'));
    const ids = [0, 1, 2].map(() => insertServer(host.db, { software: 'fake-game', gameVersion: '1.0', port: nextPort++ }));
    host.db.prepare("UPDATE servers SET state = 'stopped'").run();
    const walked: string[] = [];
    const writes: string[] = []; // each measurement's write: how many folders were walked by then, in a transaction?
    host.db.function('noted', () => void writes.push(`${walked.length} ${host.db.inTransaction}`));
    host.db.exec('CREATE TEMP TRIGGER note AFTER UPDATE OF disk_measured_at ON servers BEGIN SELECT noted(); END');
    const watcher = createDiskWatcher({
      servers: store.servers,
      crashPolicy: {} as CrashPolicy,
      doors: { of: () => { throw new Error('nothing is near its quota'); }, isClosing: () => false } as unknown as Doors,
      plans,
      config: { diskCheckMs: 60_000 },
      log: silentLogger,
      measure: async (id) => {
        walked.push(id);
        if (id === ids[1] && walked.length <= 3) store.servers.filesChanged(id); // a backup finished meanwhile
        return 4096;
      },
    });
    await watcher.measureNow();
    expect(walked).toEqual(ids);
    expect(writes).toEqual(['3 true', '3 true', '3 true']); // recorded after the walk, together, not one by one
    await watcher.measureNow();
    expect(walked.slice(3)).toEqual([ids[1]]);
    await watcher.measureNow();
    expect(walked).toHaveLength(4);
    await watcher.stop();
  } finally {
    host.cleanup();
  }
});
