// Two games through the API (issue 17): each version names its game, each address its transport; an invalid
// operator definition is left out while the service runs the others. No game is started here.
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDir } from '../helpers/app';

test('versions name their game, and a Luanti server\'s address is UDP', async () => {
  const t = await createTestApp();
  try {
    const auth = { Authorization: `Bearer ${t.token()}` };
    const versions = (await t.http.get('/v1/versions').set(auth)).body.data as { id: string; game: string }[];
    expect(versions.find((v) => v.id === 'luanti-5.6.1')).toMatchObject({ software: 'luanti', game: 'Luanti', game_version: '5.6.1' });
    expect(versions.find((v) => v.id === 'flying-squid-1.20')).toMatchObject({ game: 'Minecraft Java Edition' });
    // Each version says which player lists its servers keep (Luanti's mod keeps a whitelist and bans).
    for (const [version, lists] of [['luanti-5.6.1', ['whitelist', 'bans']], ['flying-squid-1.20', ['whitelist', 'operators', 'bans']]] as const) {
      expect((await t.http.get(`/v1/versions/${version}`).set(auth)).body.player_lists).toEqual(lists);
    }
    const cases: [string, string][] = [['luanti-5.6.1', 'udp'], ['flying-squid-1.20', 'tcp']];
    for (const [version, transport] of cases) {
      const res = await t.http.post('/v1/servers').set(auth).send({ name: version, plan: 'micro', version });
      expect(res.status).toBe(201);
      expect(res.body.address).toMatchObject({ transport });
      expect((await t.http.get(`/v1/servers/${res.body.id}`).set(auth)).body.address.transport).toBe(transport);
    }
  } finally {
    await t.finish();
  }
});

test('an invalid operator definition is left out and the service runs the other software', async () => {
  const software = tempDir('software');
  fs.writeFileSync(path.join(software, 'broken.json'), JSON.stringify({ id: 'broken', description: 'x', game_versions: ['1'], command: ['x'], ipc: 'yes' }));
  const t = await createTestApp({ software });
  try {
    const auth = { Authorization: `Bearer ${t.token()}` };
    const ids = ((await t.http.get('/v1/versions').set(auth)).body.data as { software: string }[]).map((v) => v.software);
    expect(ids).toContain('flying-squid');
    expect(ids).not.toContain('broken');
  } finally {
    await t.finish();
    fs.rmSync(software, { recursive: true, force: true });
  }
});
