import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app';
import { openDb } from '../../src/store/db';

// The CLI as operators run it: `node bin/gsh.js` (what `npx gsh` runs) on a DATA_DIR, built by `npm test`.
const bin = path.join(__dirname, '..', '..', 'bin', 'gsh.js');
const run = (args: string[], dataDir: string) =>
  spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' });

describe('npx gsh token …', () => {
  // Each test gets its own DATA_DIR (docs/conventions.md "Tests").
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir('cli');
  });
  afterEach(() => execFileSync('rm', ['-rf', dataDir]));

  test('create prints the token alone on the last line; list shows it; revoke removes it', () => {
    const created = run(['token', 'create', '--email', 'ops@example.com', '--name', 'deploy', '--scopes', 'servers:read', '--expires-in', '30d'], dataDir);
    expect(created.status).toBe(0);
    const lines = created.stdout.trim().split('\n');
    const token = lines[lines.length - 1];
    expect(token).toMatch(/^gsh_[A-Za-z0-9_-]{43}$/);

    const listed = run(['token', 'list', '--email', 'ops@example.com'], dataDir);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain('deploy');
    expect(listed.stdout).toContain('servers:read');
    expect(listed.stdout).not.toContain(token);
    const id = listed.stdout.split('\t')[0];

    const revoked = run(['token', 'revoke', '--email', 'ops@example.com', '--id', id], dataDir);
    expect(revoked.status).toBe(0);
    expect(run(['token', 'list', '--email', 'ops@example.com'], dataDir).stdout.trim()).toBe('');
  });

  test.each([
    ['no command', [], 2],
    ['unknown scope', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--scopes', 'root'], 2],
    ['bad expiry', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', 'soon'], 2],
    ['missing name', ['token', 'create', '--email', 'a@b.c'], 2],
    ['unknown flag', ['token', 'list', '--email', 'a@b.c', '--all'], 2],
    // Not a usage error: the command line is right, the user is not there (README "Command line": exit 1).
    ['revoke for an unknown user', ['token', 'revoke', '--email', 'nobody@b.c', '--id', 'tok_x'], 1],
  ])('%s → exit code %s with a message on stderr, and nothing written', (_name, args, code) => {
    const res = run(args as string[], dataDir);
    expect(res.status).toBe(code);
    expect(res.stderr).toMatch(/gsh: |Usage:/);
    expect(res.stdout).not.toMatch(/gsh_/);
    // A refused command leaves no user behind (token create used to make its user before checking its flags).
    if (fs.existsSync(path.join(dataDir, 'gsh.sqlite'))) {
      const db = openDb(path.join(dataDir, 'gsh.sqlite'));
      try {
        expect(db.prepare('SELECT COUNT(*) FROM users').pluck().get()).toBe(0);
      } finally {
        db.close();
      }
    }
  });

  test('token create obeys TOKENS_PER_USER: past it, exit code 1, a quota message, and nothing written', () => {
    const create = (name: string) =>
      spawnSync(process.execPath, [bin, 'token', 'create', '--email', 'ops@example.com', '--name', name], {
        env: { ...process.env, DATA_DIR: dataDir, TOKENS_PER_USER: '2' },
        encoding: 'utf8',
      });
    expect(create('one').status).toBe(0);
    expect(create('two').status).toBe(0);
    const refused = create('three');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^gsh: This account already holds 2 live API tokens, the most allowed; revoke one first\./);
    expect(refused.stdout).not.toMatch(/gsh_/);
    const db = openDb(path.join(dataDir, 'gsh.sqlite'));
    try {
      expect(db.prepare('SELECT name FROM tokens ORDER BY id').pluck().all()).toEqual(['one', 'two']);
    } finally {
      db.close();
    }
  });

  test('works while the service holds the same database open', () => {
    const script = `
      const { openDb } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'src', 'store', 'db.js'))});
      const db = openDb(process.argv[1] + '/gsh.sqlite');
      db.prepare('BEGIN IMMEDIATE').run(); setTimeout(() => { db.prepare('COMMIT').run(); process.exit(0); }, 500);
      process.stdout.write('locked\\n');`;
    const holder = require('node:child_process').spawn(process.execPath, ['-e', script, dataDir]);
    // Settles once the holder has exited too, so afterEach removes a DATA_DIR nobody has open.
    const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    return new Promise<void>((resolve, reject) => {
      holder.stdout.once('data', () => {
        // The service is mid-write; the CLI waits (busy_timeout) rather than failing.
        const res = run(['token', 'create', '--email', 'ops@example.com', '--name', 'while-busy'], dataDir);
        try {
          expect(res.status).toBe(0);
          resolve();
        } catch (e) {
          reject(e);
        }
      });
    }).finally(() => exited);
  });
});

describe('npx gsh user set-quota …', () => {
  // Each test gets its own DATA_DIR, with one user made by `token create` (docs/conventions.md "Tests").
  let dataDir: string;
  const runQ = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, DATA_DIR: dataDir, ...env }, encoding: 'utf8' });
  const setQuota = (...args: string[]) => runQ(['user', 'set-quota', '--email', 'ops@example.com', ...args]);
  const rows = () => {
    const db = openDb(path.join(dataDir, 'gsh.sqlite'));
    try {
      return db.prepare('SELECT servers, running, memory_mb FROM user_quotas').all();
    } finally {
      db.close();
    }
  };
  beforeEach(() => {
    dataDir = tempDir('cli-quota');
    expect(run(['token', 'create', '--email', 'ops@example.com', '--name', 'x'], dataDir).status).toBe(0);
  });
  afterEach(() => execFileSync('rm', ['-rf', dataDir]));

  test('sets any subset, keeps the rest, prints every quota with where its limit comes from; "default" resets', () => {
    const first = setQuota('--servers', '3', '--memory-mb', '2048');
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual([
      'Quotas of ops@example.com:',
      "servers    limit 3 (this user's own; default 10), used 0",
      'running    limit 5 (default), used 0',
      "memory_mb  limit 2048 (this user's own; default 8192), used 0",
    ]);
    expect(setQuota('--running', '0').stdout).toContain("running    limit 0 (this user's own; default 5), used 0");
    expect(rows()).toEqual([{ servers: 3, running: 0, memory_mb: 2048 }]);
    expect(setQuota('--servers', 'default').stdout).toContain('servers    limit 10 (default), used 0');
    expect(rows()).toEqual([{ servers: null, running: 0, memory_mb: 2048 }]);
    // Back to every default: the user has no row of its own left.
    expect(setQuota('--running', 'default', '--memory-mb', 'default').status).toBe(0);
    expect(rows()).toEqual([]);
    // The defaults are the operator's QUOTA_* settings; `user quota` prints without changing anything.
    const shown = runQ(['user', 'quota', '--email', 'ops@example.com'], { QUOTA_SERVERS: '4' });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('servers    limit 4 (default), used 0');
  });

  test('a limit that lets one account take every game port is set, with a note saying so', () => {
    const res = runQ(['user', 'set-quota', '--email', 'ops@example.com', '--servers', '100'], { GAME_PORT_RANGE: '25565-25664' });
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('Note: 100 servers can take every one of the 100 game ports (GAME_PORT_RANGE).');
  });

  test.each([
    ['no quota named', []],
    ['a negative number', ['--servers=-1']],
    ['a fraction', ['--servers', '1.5']],
    ['a word', ['--memory-mb', 'lots']],
    ['past the largest quota', ['--running', '1000000001']],
    ['one good value and one bad', ['--servers', '7', '--running', 'x']],
    ['an unknown user (refused, not a usage error)', ['--servers', '7'], 'nobody@example.com', 1],
  ])('%s → exit code 2 (or 1) with a message on stderr, and nothing written', (_name, args, email = 'ops@example.com', code = 2) => {
    expect(setQuota('--servers', '3').status).toBe(0);
    const res = runQ(['user', 'set-quota', '--email', email, ...(args as string[])]);
    expect(res.status).toBe(code);
    expect(res.stderr).toMatch(/^gsh: /);
    expect(rows()).toEqual([{ servers: 3, running: null, memory_mb: null }]);
  });
});
