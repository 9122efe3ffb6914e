import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Store } from 'express-rate-limit';
import type { Db } from '../store/db';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import { packageRoot } from '../paths';
import { createUsersRepo } from '../store/users-repo';
import { createTokensRepo } from '../store/tokens-repo';
import { createSessionsRepo } from '../store/sessions-repo';
import { sessionRoutes } from './session-routes';

/** What the dashboard needs from the service (passed in by createApp). Only db, clock and log are required. */
export interface DashboardDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** How long a sign-in lasts (absolute, not sliding); default 12 hours. */
  sessionTtlMs?: number;
  /** Failed sign-ins allowed per window; default 10 per email and 20 per address per 15 minutes. */
  signInLimit?: { perEmail: number; perAddress: number; windowMs: number };
  /** Shared counters when several instances serve one site; memory by default (as for /v1). */
  rateLimitStores?: { perEmail: Store; perAddress: Store };
}

/** The static page: HTML, CSS and ES modules, served as files so the CSP can forbid inline script and style. */
export function publicDir(): string {
  return path.join(packageRoot(), 'src', 'dashboard', 'public');
}

/**
 * Only this host, no inline code, no plugins, no framing (CSP Level 3). connect-src 'self' lets the page reach
 * /v1 and /dashboard and nothing else, so even injected markup could not send data away.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function csp(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  next();
}

/** Mounts the web dashboard: the page at `/`, its files at /dashboard/assets, its session endpoints at /dashboard. */
export function mountDashboard(app: Express, deps: DashboardDeps): void {
  const users = createUsersRepo(deps.db, deps.clock);
  const tokens = createTokensRepo(deps.db, deps.clock);
  const sessions = createSessionsRepo(deps.db, deps.clock, tokens);
  const dir = publicDir();

  app.get('/', csp, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
  // no-cache: the browser revalidates (ETag) on each load, so a new release is picked up at once.
  app.use('/dashboard/assets', csp, express.static(dir, { index: false, cacheControl: true, maxAge: 0, fallthrough: true }));
  app.use(
    '/dashboard',
    csp,
    sessionRoutes({
      users,
      tokens,
      sessions,
      clock: deps.clock,
      sessionTtlMs: deps.sessionTtlMs ?? 12 * 3600_000,
      signInLimit: deps.signInLimit ?? { perEmail: 10, perAddress: 20, windowMs: 15 * 60_000 },
      rateLimitStores: deps.rateLimitStores,
    }),
  );
}
