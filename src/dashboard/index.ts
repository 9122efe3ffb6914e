import type { Express } from 'express';
import type { Db } from '../store/db';
import type { Clock } from '../clock';
import type { Logger } from '../log';

/** What the dashboard needs from the service (passed in by createApp). */
export interface DashboardDeps {
  db: Db;
  clock: Clock;
  log: Logger;
}

/** Mounts the web dashboard at `/` (sign-in, settings → API tokens, servers). Filled in by the dashboard work. */
export function mountDashboard(_app: Express, _deps: DashboardDeps): void {}
