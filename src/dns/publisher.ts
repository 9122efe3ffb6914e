// Keeps the zone in step with the servers' names and addresses (docs/architecture.md "DNS names"). The servers
// table is the outbox: a create, rename, move or delete commits there as it does today, and this loop brings the
// DNS server to it, so a DNS server that is down never blocks an API call: the server shows `dns.status` pending
// until an update is accepted, and failed updates are retried with backoff. At start every server with a name, and
// every server that had records, is reconciled once.
import type { Logger } from '../log';
import type { Clock } from '../clock';
import type { DnsRepo, DnsWanted } from '../store/dns-repo';
import { publishedKey } from '../store/dns-repo';
import type { Change } from './message';
import { OWNED_TYPES, recordSets } from './records';
import type { DnsUpdater } from './updater';

export interface DnsPublisherDeps {
  repo: DnsRepo;
  updater: DnsUpdater;
  zone: string;
  ttl: number;
  clock: Clock;
  log: Logger;
  /** How often failed updates are looked at again (their own backoff decides whether they are due). */
  sweepMs?: number;
}

/** 5 s after the first failure, doubling, at most 5 minutes apart. */
const backoffMs = (attempts: number) => Math.min(5_000 * 2 ** attempts, 300_000);

export function createDnsPublisher(deps: DnsPublisherDeps) {
  const { repo, updater, zone, ttl, clock, log } = deps;
  const queued = new Set<string>();
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  /** One server: the update that takes its records from what they may be to what they should be, in one message. */
  async function sync(serverId: string, force: boolean): Promise<void> {
    const want = repo.wanted(serverId);
    const state = repo.state(serverId);
    if (!want && !state) return;
    if (want && state?.publishedFor === publishedKey(want, zone) && !force) return;
    if (state && state.nextAttemptAt !== null && Date.parse(state.nextAttemptAt) > clock.now() && !force) return;
    const sets = want ? recordSets(want, zone) : [];
    const names = [...new Set(sets.map((s) => s.name))];
    const touched = [...new Set([...(state?.names ?? []), ...names])];
    // Every type the service owns at every name it touches is replaced: what a server had, it no longer has.
    const changes: Change[] = [
      ...touched.flatMap((name) => OWNED_TYPES.map((type): Change => ({ op: 'delete-rrset', name, type }))),
      ...sets.flatMap((set) => set.records.map((data): Change => ({ op: 'add', name: set.name, ttl, data }))),
    ];
    repo.beginAttempt(serverId, names);
    try {
      await updater.update(changes);
      repo.succeeded(serverId, want, names, zone);
    } catch (err) {
      const attempts = (state?.attempts ?? 0) + 1;
      repo.failed(serverId, (err as Error).message, clock.now() + backoffMs(attempts - 1));
      log.warn('a DNS update failed; it is retried', { serverId, attempts, error: (err as Error).message });
    }
  }

  /** Works through the queue one server at a time (updates to one zone are applied in order anyway). */
  function drain(force: boolean): Promise<void> {
    running ??= (async () => {
      while (queued.size > 0 && !closed) {
        const [id] = queued;
        queued.delete(id);
        try {
          await sync(id, force);
        } catch (err) {
          log.error('publishing a server\'s DNS records failed', { serverId: id, error: String(err) });
        }
      }
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    /** A server's name or address may have changed (its create, update, move, delete): bring its records up to date. */
    nudge(serverId: string): Promise<void> {
      queued.add(serverId);
      return drain(false);
    },
    /** Start: every candidate once, whatever was recorded, then the sweep for retries. */
    async start(): Promise<void> {
      if (closed) return;
      timer = setInterval(() => {
        for (const id of repo.due()) queued.add(id);
        void drain(false);
      }, deps.sweepMs ?? 5_000);
      timer.unref();
      for (const id of repo.candidates()) queued.add(id);
      await drain(true);
    },
    /** Waits for the update in flight, if any (tests; shutdown). */
    idle: () => running ?? Promise.resolve(),
    close(): void {
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

export type DnsPublisher = ReturnType<typeof createDnsPublisher>;
export type { DnsWanted };
