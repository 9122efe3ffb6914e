import fs from 'node:fs';
import path from 'node:path';

/**
 * src/runtime/ is layered (docs/architecture.md "Layers of the runtime"): compose.ts wires the loops, which drive the
 * services, which act through a server's door (server/), which runs games on a host (host/, with docker/ under it),
 * which launches what the software definitions (software/) describe. A file imports only from its own layer or
 * those below it, so the folders say who may depend on whom.
 */
const runtime = path.join(__dirname, '..', '..', 'src', 'runtime');
const ORDER = ['software', 'host', 'server', 'services', 'loops'];

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return files(full);
    return /\.(ts|cjs)$/.test(e.name) ? [full] : [];
  });
}

/** The layer of a file under src/runtime (compose.ts is above them all), or null outside src/runtime. */
function layerOf(file: string): number | null {
  const rel = path.relative(runtime, file);
  if (rel.startsWith('..')) return null;
  const top = rel.split(path.sep)[0];
  return top === 'compose.ts' ? ORDER.length : ORDER.indexOf(top);
}

test('every file of src/runtime is in a layer folder (or is compose.ts)', () => {
  expect(files(runtime).filter((f) => layerOf(f) === -1).map((f) => path.relative(runtime, f))).toEqual([]);
});

test('no file of src/runtime imports from a layer above its own', () => {
  const upward: string[] = [];
  for (const file of files(runtime)) {
    const from = layerOf(file)!;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|require\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = layerOf(path.resolve(path.dirname(file), m[1]));
      if (target !== null && target > from) upward.push(`${path.relative(runtime, file)} → ${m[1]}`);
    }
  }
  expect(upward).toEqual([]);
});
