// A customer's files on a Docker volume (issue 40 §1; docs/architecture.md "Server files"): the Files API with
// RUNTIME=docker, every operation through the node's engine (a helper container on the volume, the archive
// endpoints; each operation an exec in one helper kept for the server). The same core cases as test/integration/files.test.ts: upload, list, download with Range and ETag,
// a lost update refused (412), new folder, move, delete, a folder as .zip and .tar.gz, a zipped world imported, a
// zip slip refused; a link the game made is listed and never followed; and no container mounts a path of this host.
// Ports 29480-29489.
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { instanceName } from '../../src/runtime/host/cgroups';
import { volumeName } from '../../src/runtime/host/docker/docker-environment';
import { LABEL_HELPER } from '../../src/runtime/host/docker/helper-containers';
import { GAME_DIR } from '../../src/runtime/host/docker/image';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { containerOnVolume, DOCKER_HOST, engine, ensureEngine, FIRST_IMAGE_MS, GAME_USER, REMOVAL_MS, removeContainersOf, volumesOf, watchMounts } from './engine';
import { zipOf } from '../helpers/zip';

jest.setTimeout(300_000);

let lease: { release(): Promise<void> };
let t: TestApp;
let mounts: ReturnType<typeof watchMounts> | undefined;
let token: string;
let id: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const files = (sub = '') => `/v1/servers/${id}/files${sub}`;
const put = (p: string, body: Buffer | string, headers: Record<string, string> = {}) =>
  t.http.put(files('/content')).query({ path: p }).set(auth()).set('Content-Type', 'application/octet-stream').set(headers).send(Buffer.from(body));
const binary = (res: import('supertest').Response, cb: (err: Error | null, body: Buffer) => void) => {
  const c: Buffer[] = [];
  res.on('data', (d: Buffer) => c.push(d)).on('end', () => cb(null, Buffer.concat(c)));
};
/** The states of the server's helper containers on the engine. */
const helpersOf = async (serverId: string) => {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL_HELPER}=${serverId}`] }));
  return (await engine.json<Array<{ State: string }>>('GET', `/containers/json?all=1&filters=${filters}`)).map((c) => c.State);
};
const names = async (p: string) => ((await t.http.get(files()).query({ path: p }).set(auth())).body.data as { name: string }[]).map((e) => e.name);

beforeAll(async () => {
  lease = await ensureEngine();
  t = await createTestApp({
    boot: true,
    env: { RUNTIME: 'docker', DOCKER_HOST, GAME_PORT_RANGE: '29480-29489' },
    runtime: { backoffMs: 300, stopTimeoutMs: 10_000, reconcileMs: 500 },
  });
  mounts = watchMounts(t.config.dataDir, [engine]);
  token = t.token('files-docker@example.com');
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'Files', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  id = created.body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped', FIRST_IMAGE_MS);
}, FIRST_IMAGE_MS + 120_000); // the boot may build the game image on a cold engine

afterAll(async () => {
  await mounts?.stop();
  await t?.finish();
  if (t) await removeContainersOf(t.config.dataDir);
  await lease?.release();
}, REMOVAL_MS);

/** What a game could have made in its volume: `entries` written by a container of the image, as the games' user. */
async function putTar(entries: Array<{ name: string; type?: 'symlink' | 'directory'; linkname?: string; content?: string }>): Promise<void> {
  const container = await containerOnVolume(engine, t.config.dataDir, id);
  try {
    const pack = tar.pack();
    for (const e of entries) {
      const header = { name: e.name, type: e.type, linkname: e.linkname, uid: GAME_USER.uid, gid: GAME_USER.gid };
      if (e.type) pack.entry(header);
      else pack.entry(header, e.content ?? '');
    }
    pack.finalize();
    await engine.upload(`/containers/${container}/archive?path=${GAME_DIR}`, Readable.from(pack), 'application/x-tar', 'PUT');
  } finally {
    await engine.json('DELETE', `/containers/${container}?force=1`);
  }
}


/** A zip's entries by name, with their content (folders end with /, content ''). */
function unzip(buffer: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: Record<string, string> = {};
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) {
          out[e.fileName] = '';
          return zip.readEntry();
        }
        zip.openReadStream(e, (err2, s) => {
          if (err2 || !s) return reject(err2);
          const c: Buffer[] = [];
          s.on('data', (d: Buffer) => c.push(d)).on('end', () => {
            out[e.fileName] = Buffer.concat(c).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.once('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

/** A .tar.gz's entries by name, with their content. */
async function untar(buffer: Buffer): Promise<Record<string, string>> {
  const extract = tar.extract();
  const out: Record<string, string> = {};
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, s, next) => {
      const c: Buffer[] = [];
      s.on('data', (d) => void c.push(d as Buffer)).on('end', () => {
        out[h.name] = Buffer.concat(c).toString('utf8');
        next();
      });
    });
    extract.once('finish', resolve);
    extract.once('error', reject);
  });
  extract.end(zlib.gunzipSync(buffer));
  await done;
  return out;
}

test('upload, list, download with Range and ETag, If-Match, new folder, move, delete, in the volume', async () => {
  const created = await put('hello.txt', 'hello world');
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ path: 'hello.txt', type: 'file', size: 11 });
  expect(created.body.etag).toMatch(/^"/);

  const list = await t.http.get(files()).set(auth());
  expect(list.status).toBe(200);
  const listed = list.body.data.map((e: { name: string }) => e.name);
  expect(listed).toContain('hello.txt');
  expect(listed.indexOf('world')).toBeLessThan(listed.indexOf('hello.txt')); // folders first
  expect(listed.some((n: string) => n.startsWith('.gsh-'))).toBe(false); // no staging left or shown

  const whole = await t.http.get(files('/content')).query({ path: 'hello.txt' }).set(auth()).buffer(true).parse(binary);
  expect([whole.status, whole.body.toString(), whole.headers.etag, whole.headers['content-length']]).toEqual([200, 'hello world', created.body.etag, '11']);
  const part = await t.http.get(files('/content')).query({ path: 'hello.txt' }).set(auth()).set('Range', 'bytes=6-9').buffer(true).parse(binary);
  expect([part.status, part.body.toString(), part.headers['content-range']]).toEqual([206, 'worl', 'bytes 6-9/11']);
  expect(part.headers.etag).toBe(created.body.etag);
  const past = await t.http.get(files('/content')).query({ path: 'hello.txt' }).set(auth()).set('Range', 'bytes=50-');
  expect(past.status).toBe(416);

  expect((await put('hello.txt', 'x', { 'If-None-Match': '*' })).status).toBe(412);
  const replaced = await put('hello.txt', 'hello again', { 'If-Match': created.body.etag });
  expect(replaced.status).toBe(200);
  expect(replaced.body.etag).not.toBe(created.body.etag);
  const lost = await put('hello.txt', 'stale', { 'If-Match': created.body.etag });
  expect([lost.status, lost.body.code]).toEqual([412, 'precondition_failed']);
  const now = await t.http.get(files('/content')).query({ path: 'hello.txt' }).set(auth()).buffer(true).parse(binary);
  expect(now.body.toString()).toBe('hello again');

  expect((await t.http.post(files('/folders')).set(auth()).send({ path: 'plugins' })).status).toBe(201);
  expect((await t.http.post(files('/folders')).set(auth()).send({ path: 'plugins' })).body.code).toBe('file_conflict');
  const moved = await t.http.post(files('/moves')).set(auth()).send({ from: 'hello.txt', to: 'plugins/hello.txt' });
  expect(moved.status).toBe(200);
  expect(moved.body).toMatchObject({ path: 'plugins/hello.txt', type: 'file', size: 11 });
  expect(await names('plugins')).toEqual(['hello.txt']);
  expect((await t.http.get(files()).query({ path: 'hello.txt' }).set(auth())).body.code).toBe('file_not_found');
  expect((await t.http.delete(files()).query({ path: 'plugins' }).set(auth())).body.code).toBe('file_conflict'); // not empty
  expect((await t.http.delete(files()).query({ path: 'plugins', recursive: true }).set(auth())).status).toBe(204);
  expect(await names('')).not.toContain('plugins');

  const activity = await t.http.get(files('/activity')).set(auth());
  expect(activity.body.data.map((c: { operation: string }) => c.operation)).toEqual(['delete', 'move', 'create_folder', 'upload', 'upload']);
});

test('a link the game made is listed, never followed; settings.json is read-only', async () => {
  await putTar([{ name: 'escape', type: 'symlink', linkname: '/etc' }]);
  const listed = (await t.http.get(files()).set(auth())).body.data.find((e: { name: string }) => e.name === 'escape');
  expect(listed).toMatchObject({ type: 'symlink' });
  expect((await t.http.get(files('/content')).query({ path: 'escape/passwd' }).set(auth())).body.code).toBe('file_conflict');
  expect((await put('escape/x', 'x')).body.code).toBe('file_conflict');
  expect((await t.http.delete(files()).query({ path: 'escape' }).set(auth())).status).toBe(204);
  expect(await names('')).not.toContain('escape');
  expect((await put('settings.json', '{}')).body.code).toBe('file_read_only');
  expect((await t.http.get(files('/content')).query({ path: 'settings.json' }).set(auth())).status).toBe(200);
});

test('a zipped world imported into world (replace=folder), a zip slip refused, the folder downloaded as .zip and .tar.gz', async () => {
  const good = await zipOf([['MyWorld/level.dat', 'LEVEL'], ['MyWorld/region/r.0.0.mca', 'REGION']]);
  const res = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder', strip_components: 1 }).set(auth()).set('Content-Type', 'application/zip').send(good);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ path: 'world', files: 2, bytes: 11 });
  expect(await names('world')).toEqual(['region', 'level.dat']);
  const region = await t.http.get(files('/content')).query({ path: 'world/region/r.0.0.mca' }).set(auth()).buffer(true).parse(binary);
  expect(region.body.toString()).toBe('REGION');
  expect((await names('')).filter((n) => n.startsWith('.'))).toEqual([]);
  // Imported again over it: the helpers (the games' user) can write in and delete what the first import made.
  const again = await zipOf([['MyWorld/level.dat', 'LEVEL2'], ['MyWorld/region/r.0.0.mca', 'REGION']]);
  expect((await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder', strip_components: 1 }).set(auth()).set('Content-Type', 'application/zip').send(again)).status).toBe(200);
  expect((await put('world/region/new.mca', 'NEW')).status).toBe(201);
  expect((await t.http.delete(files()).query({ path: 'world/region/new.mca' }).set(auth())).status).toBe(204);
  expect((await names('')).filter((n) => n.startsWith('.'))).toEqual([]);

  // yazl refuses to write a `..` name: the zip is made with a name of the same length, then its bytes renamed.
  const made = await zipOf([['ok.txt', 'ok'], ['ZZ/ZZ/evil.txt', 'EVIL']]);
  const slip = Buffer.from(made.toString('latin1').replaceAll('ZZ/ZZ/', '../../'), 'latin1');
  expect(slip.toString('latin1').split('../../evil.txt').length).toBe(3); // its local header and its central entry
  const bad = await t.http.post(files('/extract')).query({ path: 'world', replace: 'folder' }).set(auth()).set('Content-Type', 'application/zip').send(slip);
  expect([bad.status, bad.body.code]).toEqual([422, 'unsafe_archive']);
  expect(await names('world')).toEqual(['region', 'level.dat']); // as it was

  const zip = await t.http.get(files('/archive')).query({ path: 'world', format: 'zip' }).set(auth()).buffer(true).parse(binary);
  expect([zip.status, zip.headers['content-type']]).toEqual([200, 'application/zip']);
  expect(await unzip(zip.body)).toEqual({ 'level.dat': 'LEVEL2', 'region/': '', 'region/r.0.0.mca': 'REGION' });
  const tgz = await t.http.get(files('/archive')).query({ path: 'world' }).set(auth()).buffer(true).parse(binary);
  expect(tgz.status).toBe(200);
  expect(await untar(tgz.body)).toEqual({ 'level.dat': 'LEVEL2', 'region/': '', 'region/r.0.0.mca': 'REGION' });
});

test('the server deleted with its volume and its kept helper; no container mounted a path of this host', async () => {
  // The operations above ran in one helper kept for the server (kept-helpers.ts), still there until it idles out.
  expect(await helpersOf(id)).toEqual(['running']);
  expect((await t.http.delete(`/v1/servers/${id}`).set(auth())).status).toBe(202);
  await until('deleted', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).status === 404, REMOVAL_MS);
  expect((await volumesOf(t.config.dataDir)).map((v) => v.Name)).not.toContain(volumeName(instanceName(t.config.dataDir), id));
  expect(await helpersOf(id)).toEqual([]);
  const seen = await mounts!.stop();
  mounts = undefined;
  expect(seen.length).toBeGreaterThan(0); // the helpers were seen
  expect(seen.filter((m) => !m.startsWith('volume '))).toEqual([]);
}, REMOVAL_MS + 30_000);
