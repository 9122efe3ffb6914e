// Events raised in one place (issue 31 §2; docs/architecture.md "Events and webhooks"): every statement that writes
// an event is in src/store/events-repo.ts, whose `raise` attaches the actor and fans a server's event out to its
// members; and the events repository is built only where a service or a CLI process is composed (createStore,
// operatorEvents), never by a repository for itself. The purge of old events is events-repo.ts's too.
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..', 'src');
const writer = path.join('store', 'events-repo.ts');
const composer = path.join('store', 'index.ts');
const writes = /\b(UPDATE(\s+OR\s+\w+)?|INSERT(\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+events\b/gi;
const builds = /\bcreateEventsRepo\(/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' || e.name === 'public' ? [] : sourceFiles(full);
    return /\.(ts|cjs|js)$/.test(e.name) ? [full] : [];
  });
}

/** Every match of `re` in src/, as `file: text`. */
function found(re: RegExp): string[] {
  return sourceFiles(root).flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(re)].map((m) => `${path.relative(root, file)}: ${m[0].replace(/\s+/g, ' ')}`),
  );
}

test('only src/store/events-repo.ts writes the events table', () => {
  const all = found(writes);
  expect(all.filter((w) => !w.startsWith(`${writer}:`))).toEqual([]);
  expect(all).toEqual(expect.arrayContaining([`${writer}: INSERT INTO events`, `${writer}: DELETE FROM events`]));
});

test('the events repository is built where a store is composed, not by the repositories that raise events', () => {
  const all = found(builds).filter((b) => !b.startsWith(`${writer}:`)); // its own definition
  expect(all.length).toBeGreaterThan(0);
  expect(all.filter((b) => !b.startsWith(`${composer}:`))).toEqual([]);
});
