import type { Config } from './config';
import type { Logger } from './log';
import type { Store } from './store';

/**
 * Retention: deletes token rows past TOKEN_RETENTION_DAYS (docs/conventions.md "Authentication") and events past
 * EVENT_RETENTION_DAYS, at boot and every TOKEN_PURGE_INTERVAL_S; a failure is logged and retried next time.
 */
export function createRetention(store: Pick<Store, 'tokens' | 'events'>, config: Pick<Config, 'tokenRetentionMs' | 'eventRetentionMs' | 'tokenPurgeIntervalMs'>, log: Logger) {
  let timer: NodeJS.Timeout | undefined;
  function run() {
    try {
      const purged = store.tokens.purge(config.tokenRetentionMs);
      if (purged > 0) log.info('purged token rows', { purged });
      const events = store.events.purge(config.eventRetentionMs);
      if (events > 0) log.info('purged events', { purged: events });
    } catch (e) {
      log.error('the retention purge failed', { error: String(e) });
    }
  }
  return {
    run,
    start() {
      run();
      timer = setInterval(run, config.tokenPurgeIntervalMs).unref();
    },
    stop: () => clearInterval(timer),
  };
}
