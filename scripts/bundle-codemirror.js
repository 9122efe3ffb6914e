// Bundles CodeMirror 6 (from node_modules, the versions package-lock.json names) into one ES module among the
// dashboard's static files, for the file manager's editor (src/dashboard/public/js/file-editor.js): the page loads
// it from this service like its own modules (no CDN; the CSP allows only 'self'). The same way as
// scripts/bundle-webauthn.js. Run after upgrading a CodeMirror package: `node scripts/bundle-codemirror.js`;
// test/dashboard/codemirror-bundle.test.ts fails while the committed file differs from what this makes.
const path = require('node:path');
const fs = require('node:fs');

const ROOT = path.join(__dirname, '..');
const OUT = path.join(ROOT, 'src', 'dashboard', 'public', 'js', 'vendor', 'codemirror.js');

/** What the editor uses: the editor with its usual extensions, the languages of game servers' config files. */
const ENTRY = `
export { basicSetup } from 'codemirror';
export { EditorView, keymap } from '@codemirror/view';
export { EditorState, Compartment } from '@codemirror/state';
export { HighlightStyle, syntaxHighlighting, StreamLanguage } from '@codemirror/language';
export { tags } from '@lezer/highlight';
export { json } from '@codemirror/lang-json';
export { yaml } from '@codemirror/lang-yaml';
export { properties } from '@codemirror/legacy-modes/mode/properties';
export { lua } from '@codemirror/legacy-modes/mode/lua';
export { toml } from '@codemirror/legacy-modes/mode/toml';
`;

const PACKAGES = ['codemirror', '@codemirror/view', '@codemirror/state', '@codemirror/language', '@lezer/highlight',
  '@codemirror/lang-json', '@codemirror/lang-yaml', '@codemirror/legacy-modes'];

function versionOf(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}

async function bundle() {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    stdin: { contents: ENTRY, resolveDir: ROOT, sourcefile: 'codemirror-entry.js', loader: 'js' },
    bundle: true,
    format: 'esm',
    target: 'es2020',
    minify: true,
    legalComments: 'inline',
    write: false,
  });
  const versions = PACKAGES.map((p) => `${p} ${versionOf(p)}`).join(', ');
  const banner = `// CodeMirror 6 (MIT, Marijn Haverbeke and others): ${versions}; bundled by scripts/bundle-codemirror.js.\n`;
  return banner + result.outputFiles[0].text;
}

module.exports = { bundle, OUT };

if (require.main === module) {
  bundle().then((text) => {
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, text);
    console.log(`wrote ${path.relative(process.cwd(), OUT)} (${text.length} bytes)`);
  });
}
