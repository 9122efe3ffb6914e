import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Store } from 'express-rate-limit';
import type { Db } from '../store/db';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { DashboardSettings } from '../config';
import { packageRoot } from '../paths';
import type { Store as ServiceStore } from '../store';
import type { Actors } from '../actors';
import { sessionRoutes } from './session-routes';
import { createSignInThrottle } from './sign-in-throttle';
import { addressOf, perMinute } from './limits';
import { currentSession } from './sessions';
import { createSecondFactorsRepo } from '../store/second-factors-repo';

/** What the dashboard needs from the service (passed in by createApp). */
export interface DashboardDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /**
   * The service's repositories (createStore): users and tokens (a token the dashboard revokes raises the service's
   * events), the sign-ins' sessions and known addresses.
   */
  store: Pick<ServiceStore, 'users' | 'tokens' | 'sessions' | 'knownAddresses'>;
  actors: Pick<Actors, 'run'>;
  /** Request limits, sign-in throttle, page token lifetime (README "Configuration"). */
  settings: DashboardSettings;
  /** How long a sign-in lasts (absolute, not sliding); default 12 hours. */
  sessionTtlMs?: number;
  /** Shared counters for the per-minute limits when several instances serve one site; memory by default (as for /v1). */
  rateLimitStores?: { files?: Store; session?: Store };
}

/** Failures a known browser, or a known address's email+address pair, may have before it waits like anyone else. */
const KNOWN_CEILING = 30;

/** The static page: HTML, CSS and ES modules, served as files so the CSP can forbid inline script and style. */
export function publicDir(): string {
  return path.join(packageRoot(), 'src', 'dashboard', 'public');
}

/**
 * Only this host, no inline code, no plugins, no framing (CSP Level 3). connect-src 'self' lets the page reach
 * /v1 and /dashboard and nothing else, so even injected markup could not send data away. img-src data: shows a
 * game's server icon as its status ping sends it (ServerStatus.icon, a PNG `data:` URI; server-status.js).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function csp(_req: Request, res: Response, next: NextFunction) {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  next();
}

/**
 * Mounts the web dashboard: the page at `/`, its files at /dashboard/assets, its session endpoints at /dashboard.
 * Every route is rate limited (docs/conventions.md "Rate limiting"): the page and its files per client address,
 * the session endpoints per session (per address without one), sign-in by its progressive delay.
 */
export function mountDashboard(app: Express, deps: DashboardDeps): void {
  const { settings } = deps;
  const { users, tokens, sessions } = deps.store;
  const dir = publicDir();
  const files = perMinute({
    name: 'dashboard-files',
    limit: settings.filesPerMinute,
    what: 'requests for the dashboard page and its files',
    key: (req) => `addr:${addressOf(req)}`,
    store: deps.rateLimitStores?.files,
  });
  const perSession = perMinute({
    name: 'dashboard-session',
    limit: settings.sessionPerMinute,
    what: 'dashboard session requests',
    key: (req) => {
      const found = currentSession(req, { sessions });
      return found ? `session:${found.session.id}` : `addr:${addressOf(req)}`;
    },
    store: deps.rateLimitStores?.session,
  });

  app.get('/', files, csp, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
  // no-cache: the browser revalidates (ETag) on each load, so a new release is picked up at once.
  app.use('/dashboard/assets', files, csp, express.static(dir, { index: false, cacheControl: true, maxAge: 0, fallthrough: true }));
  const routes = sessionRoutes(
    {
      db: deps.db,
      users,
      tokens,
      sessions,
      knownAddresses: deps.store.knownAddresses,
      clock: deps.clock,
      sessionTtlMs: deps.sessionTtlMs ?? 12 * 3600_000,
      pageTokenTtlMs: settings.pageTokenTtlMs,
      passwordCost: settings.passwordCost,
      actors: deps.actors,
      // Built here over the service's database (migration 037): only the dashboard and the CLI use it.
      factors: createSecondFactorsRepo(deps.db, deps.clock),
      throttle: createSignInThrottle(deps.clock, {
        freeFailures: settings.signInFreeFailures,
        maxDelayMs: settings.signInMaxDelayMs,
        addressFailures: settings.signInAddressFailures,
        addressWindowMs: 15 * 60_000,
        knownCeiling: KNOWN_CEILING,
      }),
    },
    perSession,
  );
  app.use('/dashboard', csp, routes);
}
