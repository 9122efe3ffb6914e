import type { Express } from 'express';
import { errorRegistry, type ErrorCode } from '../errors';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A page per error code at `/problems/<code>`, the `type` of every problem document (RFC 9457 §3.1.1: a type
 * URI, dereferenced, gives human-readable documentation), and an index at `/problems`. Built from the one error
 * registry, so every code the service can send has its page; an unknown code falls through to the 404 problem.
 */
export function serveProblemPages(app: Express): void {
  const page = (title: string, body: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
  const codes = Object.keys(errorRegistry) as ErrorCode[];
  app.get('/problems', (_req, res) => {
    const items = codes.map((c) => `<li><a href="/problems/${c}"><code>${c}</code></a>: ${escapeHtml(errorRegistry[c].title)}</li>`);
    res.type('text/html').send(page('Problem types', `<h1>Problem types</h1><ul>${items.join('')}</ul>`));
  });
  app.get('/problems/:code', (req, res, next) => {
    const code = req.params.code as ErrorCode;
    if (!Object.hasOwn(errorRegistry, code)) { next(); return; }
    const { status, title } = errorRegistry[code];
    res.type('text/html').send(
      page(
        `${code}: ${title}`,
        `<h1><code>${code}</code></h1><p>${escapeHtml(title)}. HTTP status ${status}.</p>` +
          '<p>The problem document\'s <code>detail</code> says what went wrong with that request. ' +
          'See <a href="/docs">the API reference</a> for the operations that send it and <a href="/problems">every problem type</a>.</p>',
      ),
    );
  });
}
