// DNS names, put together (docs/architecture.md "DNS names"): the settings from DNS_*, the updater that speaks to
// the zone's server, the publisher that follows the servers table, and the event feed that nudges it.
import type { Clock } from '../clock';
import type { Db } from '../store/db';
import type { EventFeed } from '../events/feed';
import type { Logger } from '../log';
import { createDnsRepo } from '../store/dns-repo';
import { createDnsPublisher } from './publisher';
import type { DnsSettings } from './settings';
import { DnsUpdateError, createDnsUpdater, type DnsUpdater } from './updater';

export interface DnsDeps {
  db: Db;
  feed: Pick<EventFeed, 'subscribe'>;
  clock: Clock;
  log: Logger;
  /** Tests shorten the sweep that retries failed updates. */
  sweepMs?: number;
  /** Tests give their own updater; else one for `settings`. */
  updater?: DnsUpdater;
}

/** Refused for good at start: the operator's DNS_* settings are wrong (not a DNS server that is down). */
export class DnsSetupError extends Error {}

/**
 * The publishing, or only the view's zone cleared when `settings` is null (DNS_ZONE unset: `Server.dns` is null
 * everywhere and nothing is sent). `start` checks the key against the zone first: a key the server refuses, or a
 * zone it does not serve, is a DnsSetupError, so the operator learns at start, not at the first name; a server
 * that does not answer is only logged (it may come up later; updates wait for it).
 */
export function createDns(settings: DnsSettings | null, deps: DnsDeps) {
  const repo = createDnsRepo(deps.db);
  if (!settings) {
    const start = (): Promise<void> => {
      repo.setZone(null);
      return Promise.resolve();
    };
    return { start, close: () => undefined, idle: () => Promise.resolve() };
  }
  const updater = deps.updater ?? createDnsUpdater({ host: settings.host, port: settings.port, zone: settings.zone, key: settings.key, now: () => new Date(deps.clock.now()) });
  const publisher = createDnsPublisher({ repo, updater, zone: settings.zone, ttl: settings.ttl, clock: deps.clock, log: deps.log, sweepMs: deps.sweepMs });
  let unsubscribe: (() => void) | null = null;
  return {
    async start(): Promise<void> {
      try {
        await updater.check();
      } catch (err) {
        if (err instanceof DnsUpdateError && err.rcode !== null) {
          throw new DnsSetupError(`DNS_ZONE ${settings.zone} at ${settings.host}:${settings.port}: ${err.message}`, { cause: err });
        }
        deps.log.warn('the DNS server does not answer; names are published once it does', { zone: settings.zone, error: String(err) });
      }
      repo.setZone({ zone: settings.zone, ttl: settings.ttl });
      // Any event about a server may follow a change of its name or address (create, update, move, delete).
      unsubscribe = deps.feed.subscribe((e) => {
        if (e.event.server_id) void publisher.nudge(e.event.server_id);
      });
      // The reconcile runs on in the background: with many named servers it takes a while, and the API (which never
      // waits for DNS) need not wait for it either.
      publisher.start().catch((err: unknown) => deps.log.error('reconciling the DNS records at start failed', { error: String(err) }));
    },
    close(): void {
      unsubscribe?.();
      publisher.close();
    },
    idle: () => publisher.idle(),
  };
}

export type Dns = ReturnType<typeof createDns>;
