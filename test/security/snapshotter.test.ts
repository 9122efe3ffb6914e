// The fuzzer's fingerprint (snapshotter in ./helpers.ts) is reused only while nothing can have changed: a write
// through the service's connection, even one that changes no value, or a file under DATA_DIR/servers, makes it
// take a full snapshot again, and a real change shows in the hash as it does in snapshot().
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { snapshot, snapshotter } from './helpers';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(() => t.finish());

test('reused while nothing is written; taken again after any write; a change shows in the hash', () => {
  t.token('snap@example.com');
  const fingerprint = snapshotter(t.db, t.dir);
  const first = fingerprint();
  expect(first).toEqual(snapshot(t.db, t.dir));
  expect(fingerprint()).toBe(first); // no write: the same fingerprint, not taken again

  t.db.prepare('UPDATE users SET email = email').run(); // a write that changes no value
  const rewritten = fingerprint();
  expect(rewritten).not.toBe(first);
  expect(rewritten.hash).toBe(first.hash);

  t.db.prepare("UPDATE users SET email = 'changed@example.com'").run();
  const changed = fingerprint();
  expect(changed.hash).not.toBe(first.hash);
  expect(changed).toEqual(snapshot(t.db, t.dir));
});

test('a file under DATA_DIR/servers makes it take a full snapshot again', () => {
  const fingerprint = snapshotter(t.db, t.dir);
  const first = fingerprint();
  fs.mkdirSync(path.join(t.dir, 'servers', 'srv_x'), { recursive: true });
  const after = fingerprint();
  expect(after.hash).not.toBe(first.hash);
  expect(after.tables['fs:servers']).toBe('/srv_x');
});
