// `npx gsh user create` and `user set-password` as operators run them (the built CLI, like
// test/integration/cli.test.ts): create the first dashboard account; for an existing one set a new password,
// which ends its sessions and, with --revoke-tokens, revokes every API token of the user.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { tempDir } from '../helpers/app';
import { openDb } from '../../src/store/db';
import { createUsersRepo } from '../../src/store/users-repo';
import { createSessionsRepo } from '../../src/store/sessions-repo';
import { createTokensRepo } from '../../src/store/tokens-repo';
import { verifyPassword } from '../../src/dashboard/passwords';
import { operatorEvents } from '../../src/store';

const bin = path.join(__dirname, '..', '..', 'bin', 'gsh.js');
const dataDir = tempDir('cli-user');
const run = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' });
const clock = { now: () => Date.now() };

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('creates the user with a scrypt hash, then changes the password and signs the user out everywhere', async () => {
  const created = run(['user', 'create', '--email', 'ops@example.com', '--password', 'first password']);
  expect(created.stderr).toBe('');
  expect(created.status).toBe(0);
  expect(created.stdout).toContain('Created user ops@example.com');

  const db = openDb(path.join(dataDir, 'gsh.sqlite'));
  try {
    const users = createUsersRepo(db, clock);
    const first = users.findByEmail('ops@example.com')!;
    expect(first.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(first.password_hash).not.toContain('first password');
    expect(await verifyPassword('first password', first.password_hash)).toBe(true);
    const sessions = createSessionsRepo(db, clock, createTokensRepo(db, clock, operatorEvents(db, clock)));
    const { secret } = sessions.create(first.id, 3600_000);

    const changed = run(['user', 'create', '--email', 'OPS@example.com', '--password', 'second password']);
    expect(changed.status).toBe(0);
    expect(changed.stdout).toContain('ended 1 dashboard session');
    const second = users.findByEmail('ops@example.com')!;
    expect(second.id).toBe(first.id);
    expect(await verifyPassword('first password', second.password_hash)).toBe(false);
    expect(await verifyPassword('second password', second.password_hash)).toBe(true);
    expect(sessions.find(secret)).toBeUndefined();
  } finally {
    db.close();
  }
}, 30_000);

test('set-password ends every session, and revokes every API token only with --revoke-tokens', async () => {
  expect(run(['user', 'create', '--email', 'dev@example.com', '--password', 'first password']).status).toBe(0);
  const db = openDb(path.join(dataDir, 'gsh.sqlite'));
  try {
    const tokens = createTokensRepo(db, clock, operatorEvents(db, clock));
    const sessions = createSessionsRepo(db, clock, tokens);
    const user = createUsersRepo(db, clock).findByEmail('dev@example.com')!;
    const secrets = [1, 2].map((i) => tokens.create(user.id, { name: `ci ${i}`, scopes: ['servers:read'] }).token);
    const live = () => secrets.filter((s) => tokens.authenticate(s) !== undefined).length;
    const browsers = [sessions.create(user.id, 3600_000), sessions.create(user.id, 3600_000)];

    const kept = run(['user', 'set-password', '--email', 'dev@example.com', '--password', 'second password']);
    expect(kept.stdout).toContain('Set the password of dev@example.com; ended 2 dashboard session(s).');
    expect(browsers.map((b) => sessions.find(b.secret))).toEqual([undefined, undefined]);
    expect(live()).toBe(2);

    sessions.create(user.id, 3600_000);
    const revoked = run(['user', 'set-password', '--email', 'dev@example.com', '--password', 'third password', '--revoke-tokens']);
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toContain('ended 1 dashboard session(s); revoked 2 API token(s).');
    expect(live()).toBe(0);
    expect(await verifyPassword('third password', createUsersRepo(db, clock).findById(user.id)!.password_hash)).toBe(true);
  } finally {
    db.close();
  }
}, 60_000);

test('set-password for an unknown user is refused: exit 1 (not a usage error) with a message on stderr', () => {
  const res = run(['user', 'set-password', '--email', 'nobody@b.c', '--password', 'long enough']);
  expect([res.status, res.stderr.trim()]).toEqual([1, 'gsh: There is no user nobody@b.c.']);
});

test.each([
  ['set-password without a password', ['user', 'set-password', '--email', 'dev@example.com']],
  ['no password', ['user', 'create', '--email', 'a@b.c']],
  ['a short password', ['user', 'create', '--email', 'a@b.c', '--password', 'short']],
  ['not an email', ['user', 'create', '--email', 'nope', '--password', 'long enough']],
  ['an unknown user command', ['user', 'delete', '--email', 'a@b.c']],
])('%s → exit 2 with a message on stderr', (_name, args) => {
  const res = run(args);
  expect(res.status).toBe(2);
  expect(res.stderr).toMatch(/gsh: |Usage:/);
});
