// The Files API's raw bodies (openapi/v1.yaml uploadServerFile, extractServerArchive): the bytes reach the handler
// whatever Content-Type they are labelled with, and a refused upload or archive leaves nothing behind, neither in the
// server's files nor in DATA_DIR/tmp. Found by test/security/fuzz.test.ts: an upload labelled application/json was
// parsed as JSON first, so the handler read an empty stream and answered 500.
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let token: string;
let server: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const put = (p: string) => t.http.put(`/v1/servers/${server}/files/content`).query({ path: p }).set(auth());
const extract = (query: Record<string, string>) => t.http.post(`/v1/servers/${server}/files/extract`).query(query).set(auth());

/** Every name under the server's folder and DATA_DIR/tmp, to compare before and after a refusal. */
function leftovers(): string[] {
  const list = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, String(f))).sort() : []);
  return [...list(path.join(t.dir, 'servers')), ...list(path.join(t.dir, 'tmp'))];
}

beforeAll(async () => {
  t = await createTestApp();
  token = t.token('raw-bodies@example.com');
  const user = t.store.users.ensure('raw-bodies@example.com');
  server = t.runtime.lifecycle.create(user.id, { name: 'raw', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' }).id;
  await t.runtime.idle(); // installed
});
afterAll(async () => {
  await t.runtime.idle();
  await t.close();
});
afterEach(() => t.expectContract());

test('an upload labelled application/json is stored as the bytes sent, not parsed', async () => {
  const text = '{"motd":"hello","max_players":8}';
  const res = await put('custom.json').set('Content-Type', 'application/json').send(text);
  expect([res.status, res.body.size]).toEqual([201, text.length]);
  const read = await t.http.get(`/v1/servers/${server}/files/content`).query({ path: 'custom.json' }).set(auth()).buffer(true).parse((r, done) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => done(null, Buffer.concat(chunks)));
  });
  expect([read.status, (read.body as Buffer).toString('utf8')]).toEqual([200, text]);
});

test('an upload whose precondition fails is refused with 412 after its bytes came, and leaves no staged file', async () => {
  expect((await put('kept.txt').set('Content-Type', 'application/octet-stream').send(Buffer.from('first'))).status).toBe(201);
  const before = leftovers();
  const res = await put('kept.txt').set('Content-Type', 'application/octet-stream').set('If-None-Match', '*').send(Buffer.from('second'));
  expect([res.status, res.body.code]).toEqual([412, 'precondition_failed']);
  expect(leftovers()).toEqual(before);
});

test('an archive labelled application/json, or not an archive at all, is refused with 422 and leaves nothing in DATA_DIR/tmp', async () => {
  const before = leftovers();
  for (const type of ['application/json', 'application/zip', 'application/octet-stream']) {
    const res = await extract({ path: 'imported' }).set('Content-Type', type).send('{"not":"an archive"}');
    expect([type, res.status, res.headers['content-type'], res.body.code]).toEqual([type, 422, expect.stringMatching(/^application\/problem\+json/), 'unsafe_archive']);
  }
  expect(leftovers()).toEqual(before);
});
