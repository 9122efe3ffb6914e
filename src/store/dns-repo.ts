// The DNS publisher's rows (migration 040; docs/architecture.md "DNS names"). The servers table stays the truth of
// what should be published (its dns_name and address, written by the servers' own writers); this repository keeps
// what was published and what is being tried, and is written only by the publisher (src/dns/publisher.ts).
import { iso } from '../clock';
import type { Db } from './db';

/** A server's name and address as the records are made from them; a server without a name or address has none. */
export interface DnsWanted {
  serverId: string;
  dnsName: string;
  host: string;
  port: number;
  transport: 'tcp' | 'udp';
}

export interface DnsState {
  serverId: string;
  /** Every name the service may have records at for this server. */
  names: string[];
  publishedFor: string | null;
  attempts: number;
  nextAttemptAt: string | null;
}

/** The text `published_for` holds and the API compares (server-view.ts): one server's full name and address. */
export const publishedKey = (w: DnsWanted, zone: string) => `${w.dnsName}.${zone}|${w.host}|${w.port}|${w.transport}`;

interface StateRow {
  server_id: string;
  names: string;
  published_for: string | null;
  attempts: number;
  next_attempt_at: string | null;
}

interface WantedRow {
  id: string;
  dns_name: string;
  host: string;
  port: number;
  transport: 'tcp' | 'udp';
}

const toState = (r: StateRow): DnsState => ({
  serverId: r.server_id,
  names: JSON.parse(r.names) as string[],
  publishedFor: r.published_for,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
});

export function createDnsRepo(db: Db) {
  const wanted = db.prepare<[string], WantedRow>(
    `SELECT id, dns_name, host, port, transport FROM servers
      WHERE id = ? AND dns_name IS NOT NULL AND host IS NOT NULL AND port IS NOT NULL AND state <> 'deleting'`,
  );
  const state = db.prepare<[string], StateRow>('SELECT server_id, names, published_for, attempts, next_attempt_at FROM dns_records WHERE server_id = ?');
  const candidates = db.prepare<[], { id: string }>(
    `SELECT id FROM servers WHERE dns_name IS NOT NULL
     UNION SELECT server_id FROM dns_records`,
  );
  const due = db.prepare<[], { id: string }>(
    `SELECT s.id FROM servers s LEFT JOIN dns_records r ON r.server_id = s.id
      WHERE s.dns_name IS NOT NULL AND s.host IS NOT NULL AND s.port IS NOT NULL AND s.state <> 'deleting'
        AND (r.published_for IS NULL
          OR r.published_for <> s.dns_name || '.' || (SELECT zone FROM dns_zone) || '|' || s.host || '|' || s.port || '|' || s.transport)
     UNION
     SELECT r.server_id FROM dns_records r LEFT JOIN servers s ON s.id = r.server_id
      WHERE s.id IS NULL OR s.dns_name IS NULL OR s.host IS NULL OR s.port IS NULL OR s.state = 'deleting'`,
  );
  const begin = db.prepare<[string, string]>(
    `INSERT INTO dns_records (server_id, names) VALUES (?, ?)
     ON CONFLICT (server_id) DO UPDATE SET names = excluded.names`,
  );
  const done = db.prepare<[string, string | null, string]>(
    'UPDATE dns_records SET names = ?, published_for = ?, attempts = 0, last_error = NULL, next_attempt_at = NULL WHERE server_id = ?',
  );
  const setZoneStatements = {
    clear: db.prepare('DELETE FROM dns_zone'),
    insert: db.prepare<[string, number]>('INSERT INTO dns_zone (zone, ttl) VALUES (?, ?)'),
  };
  const drop = db.prepare<[string]>('DELETE FROM dns_records WHERE server_id = ?');
  const failed = db.prepare<[string, string, string]>(
    'UPDATE dns_records SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE server_id = ?',
  );

  return {
    /** What should be published for a server now; null when nothing should (no name, no address, deleted). */
    wanted(serverId: string): DnsWanted | null {
      const r = wanted.get(serverId);
      return r ? { serverId: r.id, dnsName: r.dns_name, host: r.host, port: r.port, transport: r.transport } : null;
    },
    state(serverId: string): DnsState | null {
      const r = state.get(serverId);
      return r ? toState(r) : null;
    },
    /** Every server that has a name, or had records: what a full reconcile looks at. */
    candidates(): string[] {
      return candidates.all().map((r) => r.id);
    },
    /** Servers whose records differ from what they should be (the sweep's work; their backoff still applies). */
    due(): string[] {
      return due.all().map((r) => r.id);
    },
    /** Before an update is sent: the names it touches join those the server may have records at. */
    beginAttempt(serverId: string, names: string[]): void {
      const before = this.state(serverId)?.names ?? [];
      begin.run(serverId, JSON.stringify([...new Set([...before, ...names])].sort()));
    },
    /** The DNS server accepted: the server's records are now exactly those of `published` (null: none, row gone). */
    succeeded(serverId: string, published: DnsWanted | null, names: string[], zone: string): void {
      if (published === null) drop.run(serverId);
      else done.run(JSON.stringify(names), publishedKey(published, zone), serverId);
    },
    /** At start: the zone and TTL every view shows (`Server.dns`); null when the service publishes no names. */
    setZone(zone: { zone: string; ttl: number } | null): void {
      db.transaction(() => {
        setZoneStatements.clear.run();
        if (zone) setZoneStatements.insert.run(zone.zone, zone.ttl);
      })();
    },
    /** The update failed: tried again at `retryAtMs`. */
    failed(serverId: string, error: string, retryAtMs: number): void {
      failed.run(error.slice(0, 500), iso(retryAtMs), serverId);
    },
  };
}

export type DnsRepo = ReturnType<typeof createDnsRepo>;
