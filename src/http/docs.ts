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
  // Made at the first request, not at start: most starts (and test apps) never serve them.
  let yaml: string | undefined;
  let json: string | undefined;
  const document = spec.document as { servers?: Array<{ url: string }> };
  app.get('/openapi.yaml', (_req, res) => {
    yaml ??= spec.yaml.replace(/^( {2}- url: )https:\/\/gsh\.example\.com$/m, `$1${publicUrl}`);
    res.type('application/yaml').send(yaml);
  });
  app.get('/openapi.json', (_req, res) => {
    json ??= JSON.stringify({ ...document, servers: (document.servers ?? []).map((s, i) => (i === 0 ? { ...s, url: publicUrl } : s)) });
    res.type('application/json').send(json);
  });
  const page = docsPage(publicUrl);
  app.get(['/docs', '/docs/'], (_req, res) => {
    const html = page();
    if (html === null) {
      res.status(503).type('text/plain').send('The docs are not built; run `npm run docs`.');
      return;
    }
    // The inlined Redoc bundle needs inline scripts and styles; everything else must come from this host.
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self' 'unsafe-inline' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src blob:; connect-src 'self'; font-src 'self' data:",
    );
    res.type('html').send(html);
  });
}

/**
 * The built page with this service's PUBLIC_URL where the spec has its placeholder host: the server the page
 * names, the URLs of the code samples, problem `type` URIs. The contact and licence links stay as the spec gives
 * them. Read again when the file changes (`npm run docs` while the service runs); null when it is not built.
 */
function docsPage(publicUrl: string): () => string | null {
  let cached: { mtimeMs: number; html: string } | null = null;
  // Only a plain URL is put into the page's HTML and scripts (config.ts already parsed it as a URL).
  const url = /^https?:\/\/[^\s"'<>\\`]+$/.test(publicUrl) ? publicUrl.replace(/\/$/, '') : null;
  return () => {
    const file = docsFile();
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
    } catch {
      return null;
    }
    if (cached?.mtimeMs !== mtimeMs) {
      const html = fs.readFileSync(file, 'utf8');
      cached = { mtimeMs, html: url ? html.replace(/https:\/\/gsh\.example\.com(?=\/v1|\/problems\/|["'<\s])/g, url) : html };
    }
    return cached.html;
  };
}
