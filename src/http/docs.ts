import fs from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import type { Spec } from '../spec';
import { packageRoot } from '../paths';

/** Where `npm run docs` writes the Redocly page (scripts/build-docs.js). */
export function docsFile(): string {
  return path.join(packageRoot(), 'dist', 'docs', 'index.html');
}

/**
 * The published contract, without a token: the spec as YAML and JSON, and the Redocly docs built from it with
 * the Redoc bundle inlined, so the page loads nothing from outside this host.
 */
export function serveDocs(app: Express, spec: Spec, publicUrl: string): void {
  // servers[0].url names this service as its clients reach it (PUBLIC_URL), so generated clients default to it.
  const yaml = spec.yaml.replace(/^( {2}- url: )https:\/\/gsh\.example\.com$/m, `$1${publicUrl}`);
  const document = spec.document as { servers?: Array<{ url: string }> };
  const json = JSON.stringify({ ...document, servers: (document.servers ?? []).map((s, i) => (i === 0 ? { ...s, url: publicUrl } : s)) });
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yaml);
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  app.get(['/docs', '/docs/'], (_req, res) => {
    const file = docsFile();
    if (!fs.existsSync(file)) {
      res.status(503).type('text/plain').send('The docs are not built; run `npm run docs`.');
      return;
    }
    // The inlined Redoc bundle needs inline scripts and styles; everything else must come from this host.
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self' 'unsafe-inline' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src blob:; connect-src 'self'; font-src 'self' data:",
    );
    res.sendFile(file);
  });
}
