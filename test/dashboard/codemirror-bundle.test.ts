// The file manager's editor (src/dashboard/public/js/file-editor.js) loads CodeMirror from the committed bundle: it
// must be what scripts/bundle-codemirror.js makes from the installed packages, so an upgrade cannot leave the page's
// copy behind (as test/dashboard/totp.test.ts holds the @simplewebauthn/browser bundle).
import fs from 'node:fs';

test('the dashboard serves the bundle scripts/bundle-codemirror.js makes from the installed CodeMirror packages', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { bundle, OUT } = require('../../scripts/bundle-codemirror.js') as { bundle: () => Promise<string>; OUT: string };
  expect(fs.readFileSync(OUT, 'utf8')).toBe(await bundle());
}, 60_000);
