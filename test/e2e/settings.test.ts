// Settings reach a real game (docs/architecture.md "Settings"): a motd set through the API shows in a real
// Minecraft status ping after a restart, a change needing a restart is listed as pending until then, and a
// setting applied through the console (difficulty) is applied at once. Ports 29250-29259.
import { ping } from 'minecraft-protocol';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    env: { GAME_PORT_RANGE: '29250-29259' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  token = t.token('settings@example.com');
});
afterEach(async () => {
  await t.finish();
});

const action = async (id: string, type: string) => {
  const res = await t.http.post(`/v1/servers/${id}/actions`).set(auth()).send({ type });
  expect(res.status).toBe(202);
  return until(`${type} to finish`, async () => {
    const a = (await t.http.get(`/v1/servers/${id}/actions/${res.body.id}`).set(auth())).body;
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
};

/** The server's status as a Minecraft client's server list sees it. */
async function status(port: number): Promise<{ motd: string; max: number }> {
  const res = (await ping({ host: '127.0.0.1', port })) as { description: unknown; players: { max: number } };
  const text = (d: unknown): string =>
    typeof d === 'string' ? d : d && typeof d === 'object' ? String((d as { text?: string }).text ?? '') + ((d as { extra?: unknown[] }).extra ?? []).map(text).join('') : '';
  return { motd: text(res.description), max: res.players.max };
}

test('a motd set through the API shows in a status ping after a restart; difficulty applies at once', async () => {
  const created = await t.http.post('/v1/servers').set(auth())
    .send({ name: 'motd', plan: 'micro', version: 'flying-squid-1.20', settings: { motd: 'Set at create', max_players: 3 } });
  expect(created.status).toBe(201);
  const { id, address } = created.body;
  expect(await action(id, 'start')).toMatchObject({ status: 'succeeded' });
  expect(await status(address.port)).toEqual({ motd: 'Set at create', max: 3 });

  const changed = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({ motd: 'Changed by the API', difficulty: 'hard' });
  expect(changed.status).toBe(200);
  expect(changed.body.restart_pending).toEqual(['motd']); // difficulty went through the console
  const consoleLines = (await t.http.get(`/v1/servers/${id}/console`).set(auth())).body.data.map((l: { text: string }) => l.text);
  expect(consoleLines).toContain('difficulty 3');
  expect((await status(address.port)).motd).toBe('Set at create');

  expect(await action(id, 'restart')).toMatchObject({ status: 'succeeded' });
  expect(await status(address.port)).toEqual({ motd: 'Changed by the API', max: 3 });
  const after = await t.http.get(`/v1/servers/${id}/settings`).set(auth());
  expect(after.body).toMatchObject({ values: { motd: 'Changed by the API', difficulty: 'hard' }, restart_pending: [] });
  expect(await action(id, 'stop')).toMatchObject({ status: 'succeeded' });
});
