import fs from 'node:fs';
import path from 'node:path';

let root: string | undefined;

/** The folder holding package.json: the same answer from src/ under ts-jest and from dist/src/ after a build. */
export function packageRoot(): string {
  if (root) return root;
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`No package.json above ${__dirname}; is the service installed whole?`);
    dir = up;
  }
  return (root = dir);
}
