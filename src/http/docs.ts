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
export function serveDocs(app: Express, spec: Spec): void {
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(spec.yaml);
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(spec.json);
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
