// One writer of the `servers` table (issue 31 §2, docs/architecture.md "Who owns what"): every statement that
// writes it lives in src/store/server-writes.ts; other repositories call those writes inside their transactions.
// Migrations change the schema, not the rows' owner, and are left out.
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..', 'src');
const writer = path.join('store', 'server-writes.ts');
const writes = /\b(UPDATE(\s+OR\s+\w+)?|INSERT(\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+servers\b/gi;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' || e.name === 'public' ? [] : sourceFiles(full);
    return /\.(ts|cjs|js)$/.test(e.name) ? [full] : [];
  });
}

/** Every write statement on `servers` in src/, as `file: statement`. */
function serverWrites(): string[] {
  return sourceFiles(root).flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(writes)].map((m) => `${path.relative(root, file)}: ${m[0].replace(/\s+/g, ' ')}`),
  );
}

test('only src/store/server-writes.ts writes the servers table', () => {
  expect(serverWrites().filter((w) => !w.startsWith(`${writer}:`))).toEqual([]);
});

test('the check sees the writer\'s own statements (it would see them anywhere else)', () => {
  const own = serverWrites().filter((w) => w.startsWith(`${writer}:`));
  expect(own).toEqual(expect.arrayContaining([`${writer}: INSERT INTO servers`, `${writer}: UPDATE servers`, `${writer}: DELETE FROM servers`]));
});
