import fs from 'node:fs';
import path from 'node:path';
import { INHERITED, settingNames } from '../../src/cli-config';

// `gsh config` must show every setting: a variable added to src/config.ts without a line in src/cli-config.ts
// fails here.
test('gsh config lists every variable src/config.ts reads', () => {
  const source = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'config.ts'), 'utf8');
  const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]*)|\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1] ?? m[2]));
  expect([...read].filter((name) => !INHERITED.includes(name)).sort()).toEqual([...settingNames].sort());
});
