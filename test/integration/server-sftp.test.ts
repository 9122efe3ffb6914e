// getServerSftp (openapi/v1.yaml tag Files): where and as whom an SFTP client logs in, for the owner and a member
// with `files`, refused to a member without it, and `404 sftp_disabled` where the operator runs no SFTP server; and
// FileEntry.read_only, the mark of the files the service writes (the rule the writes enforce, file-guards.ts).
// Real HTTP, a real SQLite file, a real server's folder.
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(30_000);

const OWNER = 'owner@example.com';
let on: TestApp; // SFTP_PORT=2299, PUBLIC_URL on its own host
let off: TestApp; // SFTP off (the default under jest)

async function serverOf(t: TestApp, token: string): Promise<string> {
  const auth = { Authorization: `Bearer ${token}` };
  const { id } = (await t.http.post('/v1/servers').set(auth).send({ name: 'sftp', plan: 'micro', version: 'flying-squid-1.20' })).body as { id: string };
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');
  return id;
}

beforeAll(async () => {
  [on, off] = await Promise.all([
    createTestApp({ env: { SFTP_PORT: '2299', PUBLIC_URL: 'https://panel.example.com/api' } }),
    createTestApp({ env: { SFTP_PORT: 'off' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([on.runtime.idle(), off.runtime.idle()]);
  await Promise.all([on.finish(), off.finish()]);
});

type Row = [string, () => TestApp, string | null, number, Record<string, unknown>];
const rows: Row[] = [
  ['the owner', () => on, null, 200, { host: 'panel.example.com', port: 2299, username: `{id}.${OWNER}`, command: `sftp -P 2299 {id}.${OWNER}@panel.example.com` }],
  ['a member with files', () => on, 'files', 200, { host: 'panel.example.com', port: 2299, username: '{id}.member@example.com', command: 'sftp -P 2299 {id}.member@example.com@panel.example.com' }],
  ['a member without files', () => on, 'console', 403, { code: 'missing_permission', permission: 'files' }],
  ['the owner, SFTP off', () => off, null, 404, { code: 'sftp_disabled', status: 404 }],
  ['a member without files, SFTP off (the permission is checked first)', () => off, 'console', 403, { code: 'missing_permission' }],
];

test.each(rows)('GET /v1/servers/{id}/sftp as %s', async (_who, app, permission, status, body) => {
  const t = app();
  const ownerToken = t.token(OWNER);
  const id = await serverOf(t, ownerToken);
  let token = ownerToken;
  if (permission) {
    token = t.token('member@example.com');
    const added = await t.http.post(`/v1/servers/${id}/members`).set({ Authorization: `Bearer ${ownerToken}` }).send({ email: 'member@example.com', permissions: [permission] });
    expect(added.status).toBe(201);
  }
  const res = await t.http.get(`/v1/servers/${id}/sftp`).set({ Authorization: `Bearer ${token}` });
  expect(res.status).toBe(status);
  const expected = JSON.parse(JSON.stringify(body).replaceAll('{id}', id)) as Record<string, unknown>;
  expect(res.body).toMatchObject(expected);
  expect(res.headers['content-type']).toMatch(status === 200 ? /^application\/json/ : /^application\/problem\+json/);
});

test('someone else\'s server is a 404 server_not_found, SFTP on or off', async () => {
  for (const t of [on, off]) {
    const id = await serverOf(t, t.token(OWNER));
    const res = await t.http.get(`/v1/servers/${id}/sftp`).set({ Authorization: `Bearer ${t.token('stranger@example.com')}` });
    expect([res.status, res.body.code]).toEqual([404, 'server_not_found']);
  }
});

test('read_only marks the files the service writes, in a listing and in metadata; the write answer says false', async () => {
  const token = on.token(OWNER);
  const auth = { Authorization: `Bearer ${token}` };
  const id = await serverOf(on, token);
  const files = (sub = '') => `/v1/servers/${id}/files${sub}`;
  const put = await on.http.put(files('/content')).query({ path: 'server.properties' }).set(auth).set('Content-Type', 'application/octet-stream').send(Buffer.from('motd=hi\n'));
  expect([put.status, put.body.read_only]).toEqual([201, false]);
  const folder = await on.http.post(files('/folders')).set(auth).send({ path: 'plugins' });
  expect([folder.status, folder.body.read_only]).toEqual([201, false]);

  const list = await on.http.get(files()).set(auth);
  expect(list.status).toBe(200);
  const mark = Object.fromEntries((list.body.data as Array<{ name: string; read_only: boolean }>).map((e) => [e.name, e.read_only]));
  expect(mark).toMatchObject({ 'settings.json': true, 'server.properties': false, plugins: false });
  // Every entry says it, true or false (required in the contract, which createTestApp checks on every answer).
  expect(Object.values(mark).every((v) => typeof v === 'boolean')).toBe(true);

  const meta = await on.http.get(files('/metadata')).query({ path: 'settings.json' }).set(auth);
  expect([meta.status, meta.body.read_only]).toEqual([200, true]);
  // The same rule refuses the write the mark warns of.
  const refused = await on.http.delete(files()).query({ path: 'settings.json' }).set(auth);
  expect([refused.status, refused.body.code]).toEqual([403, 'file_read_only']);
  // Only at the top: a settings.json inside a folder is the customer's own.
  const own = await on.http.put(files('/content')).query({ path: 'plugins/settings.json' }).set(auth).set('Content-Type', 'application/octet-stream').send(Buffer.from('{}'));
  expect([own.status, own.body.read_only]).toEqual([201, false]);
  const inner = await on.http.get(files()).query({ path: 'plugins' }).set(auth);
  expect(inner.body.data).toEqual([expect.objectContaining({ name: 'settings.json', read_only: false })]);
});
