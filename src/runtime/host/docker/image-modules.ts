import fs from 'node:fs';
import path from 'node:path';

/**
 * The package folders `names` need at run time, found from `root` as Node's own resolution finds them (a folder's
 * `node_modules`, then each parent's): each named package and, transitively, its `dependencies`,
 * `optionalDependencies` and `peerDependencies` that are installed. A folder inside another in the list is left out
 * (the outer one holds it). An optional or peer dependency that is not installed is skipped; a missing named
 * package or dependency throws, naming it.
 */
export function moduleClosure(root: string, names: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (from: string, name: string, required: boolean): void => {
    const dir = findPackage(from, name);
    if (!dir) {
      if (required) throw new Error(`the game image needs the npm package ${name} (from ${from}); run npm install`);
      return;
    }
    if (found.has(dir)) return;
    found.add(dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dir, dep, true);
    for (const dep of Object.keys({ ...pkg.optionalDependencies, ...pkg.peerDependencies })) visit(dir, dep, false);
  };
  for (const name of names) visit(root, name, true);
  const dirs = [...found].sort();
  return dirs.filter((d) => !dirs.some((outer) => outer !== d && d.startsWith(outer + path.sep)));
}

function findPackage(from: string, name: string): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}
