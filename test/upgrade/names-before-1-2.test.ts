// A database written by the 1.1.0 rules (issue 42 §2; migration 035): names holding characters 1.2.0 began to refuse
// (NEL, CSI, U+D7FF, U+E000) are made valid at the upgrade, each such character U+FFFD, so every answer keeps to
// its schema (the contract checker of test/helpers/app.ts) and a name read back can be sent back. The rows are
// written as 1.1.0 wrote them, straight into the file, with migration 035 not yet run.
import Database from 'better-sqlite3';
import path from 'node:path';
import { createTestApp, tempDirsOfFile } from '../helpers/app';

const dataDirs = tempDirsOfFile('names-1-1');

test.each([
  ['NEL (U+0085)', 'a\u0085b', 'a\ufffdb'],
  ['CSI (U+009B), twice', '\u009bx\u009b', '\ufffdx\ufffd'],
  ['DEL (U+007F)', 'del\u007fete', 'del\ufffdete'],
  ['U+D7FF', 'x\ud7ffy', 'x\ufffdy'],
  ['U+E000 (private use)', 'x\ue000', 'x\ufffd'],
  ['nothing refused: untouched', 'Überwelt 世界 🎮', 'Überwelt 世界 🎮'],
])('a server and a token named with %s', async (_name, old, now) => {
  const dataDir = dataDirs();
  // The database as 1.1.0 left it: a server and a token with the name the old rules took.
  let t = await createTestApp({ env: { DATA_DIR: dataDir } });
  const token = t.token('old@example.com');
  const auth = { Authorization: `Bearer ${token}` };
  const id: string = (await t.http.post('/v1/servers').set(auth).send({ name: 'placeholder', plan: 'small', version: 'flying-squid-1.20' })).body.id;
  await t.finish();
  const db = new Database(path.join(dataDir, 'gsh.sqlite'));
  db.prepare('UPDATE servers SET name = ? WHERE id = ?').run(old, id);
  db.prepare('UPDATE tokens SET name = ?').run(old);
  const updatedAt = db.prepare('SELECT updated_at FROM servers WHERE id = ?').pluck().get(id);
  db.prepare('DELETE FROM schema_migrations WHERE id = 35').run();
  db.close();

  // Today's service starts on it: the migration runs, and the answers keep to the schema.
  t = await createTestApp({ env: { DATA_DIR: dataDir } });
  try {
    const listed = await t.http.get('/v1/servers').set(auth);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { name: string }) => s.name)).toEqual([now]);
    expect(listed.body.data[0].updated_at).toBe(updatedAt);
    expect((await t.http.get('/v1/tokens').set(auth)).body.data.map((k: { name: string }) => k.name)).toEqual([now]);
    // What was read can be sent back.
    expect((await t.http.patch(`/v1/servers/${id}`).set(auth).send({ name: now })).status).toBe(200);
  } finally {
    await t.finish();
  }
});
