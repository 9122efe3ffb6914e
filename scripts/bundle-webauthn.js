// Bundles @simplewebauthn/browser (from node_modules, the version package-lock.json names) into one ES module among
// the dashboard's static files, so the page loads it from this service like its own modules (no CDN; the CSP allows
// only 'self'). Run after upgrading the package: `node scripts/bundle-webauthn.js`; test/dashboard/passkeys-bundle
// .test.ts fails while the committed file differs from what this makes.
const path = require('node:path');
const fs = require('node:fs');

const OUT = path.join(__dirname, '..', 'src', 'dashboard', 'public', 'js', 'vendor', 'simplewebauthn-browser.js');

async function bundle() {
  const esbuild = require('esbuild');
  // The package exports only its entry points; its folder is the one above the CommonJS entry (script/index.js).
  const dir = path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const result = await esbuild.build({
    entryPoints: [path.join(dir, 'esm', 'index.js')],
    bundle: true,
    format: 'esm',
    target: 'es2020',
    minify: true,
    legalComments: 'inline',
    write: false,
  });
  const banner = `// @simplewebauthn/browser ${version} (MIT, Matthew Miller), bundled by scripts/bundle-webauthn.js.\n`;
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
