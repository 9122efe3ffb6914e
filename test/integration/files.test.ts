// A server's own files through the API (openapi/v1.yaml tag Files) on the local runtime: real HTTP, a real folder.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { zipOf } from '../helpers/zip';

jest.setTimeout(20_000);

let t: TestApp;
let token: string;
let id: string;
let dir: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const files = (sub = '') => `/v1/servers/${id}/files${sub}`;
const put = (p: string, body: Buffer | string, headers: Record<string, string> = {}) =>
  t.http.put(files('/content')).query({ path: p }).set(auth()).set('Content-Type', 'application/octet-stream').set(headers).send(Buffer.from(body));

beforeAll(async () => {
  t = await createTestApp();
  token = t.token();
  id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'files', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  dir = path.join(t.config.dataDir, 'servers', id);
});
afterAll(async () => {
  await t.runtime.idle();
  await t.finish();
});

async function tarGzOf(entries: Array<{ name: string; type?: string; linkname?: string }>): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    if (e.type) pack.entry({ name: e.name, type: e.type as 'symlink', linkname: e.linkname });
    else pack.entry({ name: e.name }, 'x');
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as AsyncIterable<Buffer>) chunks.push(c);
  return zlib.gzipSync(Buffer.concat(chunks));
}


test('upload, list, download with Range, replace with If-Match, create only, move, delete, activity', async () => {
  const created = await put('hello.txt', 'hello world');
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ path: 'hello.txt', type: 'file', size: 11 });
  expect(fs.readFileSync(path.join(dir, 'hello.txt'), 'utf8')).toBe('hello world');

  const list = await t.http.get(files()).set(auth());
  expect(list.status).toBe(200);
  const names = list.body.data.map((e: { name: string }) => e.name);
  expect(names.indexOf('world')).toBeLessThan(names.indexOf('hello.txt')); // folders first
  expect(names).not.toContain('logs'); // the service's console log

  const part = await t.http.get(files('/content')).query({ path: 'hello.txt' }).set(auth()).set('Range', 'bytes=6-').buffer(true).parse((res, cb) => {
    const c: Buffer[] = [];
    res.on('data', (d: Buffer) => c.push(d)).on('end', () => cb(null, Buffer.concat(c)));
  });
  expect(part.status).toBe(206);
  expect(part.body.toString()).toBe('world');
  expect(part.headers.etag).toBe(created.body.etag);

  expect((await put('hello.txt', 'x', { 'If-None-Match': '*' })).status).toBe(412);
  const replaced = await put('hello.txt', 'hello again', { 'If-Match': created.body.etag });
  expect(replaced.status).toBe(200);
  const lost = await put('hello.txt', 'stale', { 'If-Match': created.body.etag });
  expect(lost.status).toBe(412);
  expect(lost.body.code).toBe('precondition_failed');

  expect((await t.http.post(files('/folders')).set(auth()).send({ path: 'plugins' })).status).toBe(201);
  const moved = await t.http.post(files('/moves')).set(auth()).send({ from: 'hello.txt', to: 'plugins/hello.txt' });
  expect(moved.status).toBe(200);
  expect(fs.existsSync(path.join(dir, 'plugins', 'hello.txt'))).toBe(true);
  expect((await t.http.delete(files()).query({ path: 'plugins' }).set(auth())).body.code).toBe('file_conflict'); // not empty
  expect((await t.http.delete(files()).query({ path: 'plugins', recursive: true }).set(auth())).status).toBe(204);

  const activity = await t.http.get(files('/activity')).set(auth());
  expect(activity.body.data.map((c: { operation: string }) => c.operation)).toEqual(['delete', 'move', 'create_folder', 'upload', 'upload']);
  expect(activity.body.data[0].actor).toMatchObject({ type: 'user' });
});

test.each([
  ['..', '../x'], ['absolute', '/etc/passwd'], ['NUL', 'a\u0000b'], ['control', 'a\u0007b'], ['backslash', 'a\\b'],
  ['over-long name', 'n'.repeat(256)], ['over-long path', Array(20).fill('d'.repeat(250)).join('/')], ['reserved', '.gsh-upload-x'],
])('a path with %s is refused with 400 before anything is touched', async (_what, p) => {
  const res = await put(p, 'x');
  expect(res.status).toBe(400);
  expect(res.body.errors[0].pointer).toBe('/query/path');
});

test('a symlink is listed, never followed; settings.json is read-only; a device is never read', async () => {
  fs.symlinkSync('/etc', path.join(dir, 'escape'));
  const listed = (await t.http.get(files()).set(auth())).body.data.find((e: { name: string }) => e.name === 'escape');
  expect(listed).toMatchObject({ type: 'symlink' });
  expect((await t.http.get(files()).query({ path: 'escape' }).set(auth())).body.code).toBe('file_conflict');
  expect((await t.http.get(files('/content')).query({ path: 'escape/passwd' }).set(auth())).status).toBe(409);
  expect((await put('escape/x', 'x')).status).toBe(409);
  expect(fs.existsSync('/etc/x')).toBe(false);
  expect((await t.http.delete(files()).query({ path: 'escape' }).set(auth())).status).toBe(204);
  expect(fs.existsSync('/etc/passwd')).toBe(true);

  const ro = await put('settings.json', '{}');
  expect(ro.status).toBe(403);
  expect(ro.body.code).toBe('file_read_only');
  expect((await t.http.get(files('/content')).query({ path: 'settings.json' }).set(auth())).status).toBe(200);
});

test('an upload past the size limit is refused before its body is read', async () => {
  const res = await t.http.put(files('/content')).query({ path: 'big.bin' }).set(auth()).set('Content-Type', 'application/octet-stream')
    .set('Content-Length', String(3 * 1024 * 1024 * 1024)).send();
  expect(res.status).toBe(413);
  expect(fs.existsSync(path.join(dir, 'big.bin'))).toBe(false);
});

test('extract a zip into a folder (replace=folder), all or nothing; unsafe archives refused with nothing written', async () => {
  const good = await zipOf([['MyWorld/level.dat', 'LEVEL'], ['MyWorld/region/r.0.0.mca', 'REGION']]);
  const res = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder', strip_components: 1 }).set(auth()).set('Content-Type', 'application/zip').send(good);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ path: 'world', files: 2 });
  expect(fs.readFileSync(path.join(dir, 'world', 'region', 'r.0.0.mca'), 'utf8')).toBe('REGION');

  for (const [what, entries] of [
    ['zip slip', [{ name: '../evil.txt' }]],
    ['absolute', [{ name: '/evil.txt' }]],
    ['duplicate', [{ name: 'a.txt' }, { name: 'a.txt' }]],
    ['backslash', [{ name: 'a\\b.txt' }]],
    ['symlink', [{ name: 'link', type: 'symlink', linkname: '/etc' }]],
    ['hard link', [{ name: 'a.txt' }, { name: 'hard', type: 'link', linkname: 'a.txt' }]],
    ['device', [{ name: 'dev', type: 'character-device' }]],
  ] as Array<[string, Array<{ name: string; type?: string; linkname?: string }>]>) {
    const bad = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder' }).set(auth()).set('Content-Type', 'application/gzip').send(await tarGzOf(entries));
    expect([what, bad.status, bad.body.code]).toEqual([what, 422, 'unsafe_archive']);
    expect(fs.readFileSync(path.join(dir, 'world', 'level.dat'), 'utf8')).toBe('LEVEL');
  }
  expect(fs.existsSync(path.join(dir, '..', 'evil.txt'))).toBe(false);
  // A zip bomb: a megabyte of zeros per few bytes, past the ratio bound before anything is written.
  const bomb = await zipOf([['zeros.bin', '\0'.repeat(5 * 1024 * 1024)]]);
  const boom = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder' }).set(auth()).set('Content-Type', 'application/zip').send(bomb);
  expect(boom.body.code).toBe('unsafe_archive');
  expect(fs.existsSync(path.join(dir, 'world', 'zeros.bin'))).toBe(false);
  // A tar.gz whose gzip is cut midway: 422, the world as it was, no staging left.
  const tarGz = zlib.gzipSync(Buffer.concat([Buffer.from('a'.repeat(100)), Buffer.alloc(1000)]));
  const cut = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder' }).set(auth()).set('Content-Type', 'application/gzip').send(tarGz.subarray(0, tarGz.length - 8));
  expect(cut.status).toBe(422);
  expect(fs.readdirSync(path.join(dir, 'world')).sort()).toEqual(['level.dat', 'region']);
  expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
});

test('a folder downloads as .zip and .tar.gz', async () => {
  const zip = await t.http.get(files('/archive')).query({ path: 'world', format: 'zip' }).set(auth()).buffer(true).parse((res, cb) => {
    const c: Buffer[] = [];
    res.on('data', (d: Buffer) => c.push(d)).on('end', () => cb(null, Buffer.concat(c)));
  });
  expect(zip.status).toBe(200);
  expect(zip.body.readUInt32LE(0)).toBe(0x04034b50);
  expect(zip.body.includes(Buffer.from('region/r.0.0.mca'))).toBe(true);
  const tgz = await t.http.get(files('/archive')).query({ path: 'world' }).set(auth()).buffer(true).parse((res, cb) => {
    const c: Buffer[] = [];
    res.on('data', (d: Buffer) => c.push(d)).on('end', () => cb(null, Buffer.concat(c)));
  });
  expect(tgz.status).toBe(200);
  expect(zlib.gunzipSync(tgz.body).includes(Buffer.from('LEVEL'))).toBe(true);
});
