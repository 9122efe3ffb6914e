// A live backup (issue 26 §3; docs/architecture.md "Backups"): a real flying-squid server with a real Minecraft
// client (mineflayer) connected. A block set through the console just before the backup is in the archive, the
// backup says it was made `live`, the player is still connected after it (no player.left, still listed, still hears
// the server), and the server never left `running`. The version's detail says beforehand which backups keep players.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import mineflayer from 'mineflayer';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { blockIn } from '../helpers/world';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (p: string) => t.http.get(p).set(auth());
const post = (p: string, body: object) => t.http.post(p).set(auth()).send(body);

beforeEach(async () => {
  t = await createTestApp({ boot: true, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('live@example.com');
});
afterEach(() => t.finish());

test('the catalog says which backups keep players connected', async () => {
  const cases: Array<[string, unknown]> = [
    ['flying-squid-1.20', { consistency: 'live' }],
    ['luanti-5.6.1', { consistency: 'stop' }],
  ];
  for (const [version, backup] of cases) expect([version, (await get(`/v1/versions/${version}`)).body.backup]).toEqual([version, backup]);
});

test('a live backup keeps a real player connected and holds a block set just before it', async () => {
  const { id, address } = (await post('/v1/servers', { name: 'live', plan: 'micro', version: 'flying-squid-1.20' })).body;
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running', 150_000);

  const bot = mineflayer.createBot({ host: '127.0.0.1', port: address.port, username: 'Stayer', auth: 'offline', version: '1.20', hideErrors: true });
  const heard: string[] = [];
  let ended = false;
  bot.on('end', () => void (ended = true));
  bot.on('error', () => undefined);
  bot.on('messagestr', (text) => void heard.push(text));
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
    });
    await until('the player listed', async () => (await get(`/v1/servers/${id}/players`)).body.online === 1 || undefined);

    // The block goes in through the console, and the backup is asked for at once: nothing waits for a save.
    expect((await post(`/v1/servers/${id}/console`, { command: 'setblock 1 100 1 gold_block' })).status).toBe(202);
    const created = await post(`/v1/servers/${id}/backups`, { name: 'while playing' });
    expect(created.status).toBe(202);
    const ready = await until('the backup', async () => {
      const b = (await get(created.headers.location)).body;
      return b.status !== 'pending' ? b : undefined;
    });
    expect(ready).toMatchObject({ status: 'ready', consistency: 'live', error: null });

    // Still connected, still listed, and still hearing the server after the backup.
    expect(ended).toBe(false);
    expect((await get(`/v1/servers/${id}/players`)).body.players.map((p: { name: string }) => p.name)).toEqual(['Stayer']);
    expect((await post(`/v1/servers/${id}/console`, { command: 'say after the backup' })).status).toBe(202);
    await until('the player hears the server', async () => heard.some((m) => m.includes('after the backup')) || undefined);
    const events = (await get('/v1/events').query({ server_id: id, limit: 100 })).body.data as { type: string; data: { to?: string } }[];
    expect(events.filter((e) => e.type === 'player.left')).toEqual([]);
    const states = events.filter((e) => e.type === 'server.state_changed').map((e) => e.data.to);
    expect(states).toEqual(['stopped', 'starting', 'running']); // installed, started, and never stopped for the backup

    // The archive holds the block.
    const { base, close } = await t.listen();
    const out = tempDir('live-archive');
    try {
      const res = await fetch(`${base}${created.headers.location}/archive`, { headers: auth() });
      fs.writeFileSync(path.join(out, 'a.tar.gz'), Buffer.from(await res.arrayBuffer()));
      execFileSync('tar', ['-xzf', 'a.tar.gz'], { cwd: out });
      expect(await blockIn(path.join(out, 'world'), 1, 100, 1)).toBe('gold_block');
    } finally {
      await close();
      fs.rmSync(out, { recursive: true, force: true });
    }
    // World saving is back on: a change after the backup reaches the disk at the stop.
    expect((await post(`/v1/servers/${id}/console`, { command: 'setblock 1 100 1 diamond_block' })).status).toBe(202);
  } finally {
    if (!ended) bot.end();
  }
  expect((await post(`/v1/servers/${id}/actions`, { type: 'stop' })).status).toBe(202);
  await until('stopped', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
  expect(await blockIn(path.join(t.config.dataDir, 'servers', id, 'world'), 1, 100, 1)).toBe('diamond_block');
});
