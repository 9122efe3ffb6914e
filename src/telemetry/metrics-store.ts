import type { Clock } from '../clock';
import type { Db } from '../store/db';
import { retentionFor } from './levels';
import { formatRange } from './range';
import { createRollup } from './rollup';
import { adoptUnrolled, RAW_COLUMNS } from './inbox';
import type { MetricsWindow, NewSample, Sample } from './types';
import { createWindowReader } from './window';

/**
 * The metrics time series (issue 4): raw samples, per-minute and per-hour rollups in SQLite (migration 003;
 * levels.ts has the levels and retention, rollup.ts the incremental rollups, window.ts the range reads, inbox.ts
 * the small table new samples land in until their minute is rolled up).
 *
 * Contracts:
 * - write() stores one sampling round in one transaction and returns the samples as stored (whole seconds,
 *   fixed-point values) with their ids. It never rolls up; maintain() does, and should run after each round.
 * - maintain() closes finished minutes and hours and applies retention; it is cheap when nothing closed.
 * - All time comes from the injected clock, so tests can write days of samples without waiting.
 * - History stays readable after a server stops (it is keyed by server id, not by process) and survives a
 *   restart (it is all in the db); deleteServer() is the only way it goes before retention.
 */
export interface MetricsStore {
  write(samples: NewSample[]): Sample[];
  maintain(): void;
  /** The window `rangeMs` long that ends at `endMs` (default now); `range` is how the answer names its length. */
  query(serverId: string, rangeMs: number, range?: string, endMs?: number): MetricsWindow;
  /** Now by the store's clock (ms): a window that ends now ends here (getServerMetrics measures `from`–now by it). */
  now(): number;
  latest(serverId: string): Sample | null;
  /** Samples of this server strictly after the one with this id, oldest first, at most `limit` (1..1000). An id that is not a sample id yields []. */
  after(serverId: string, afterSampleId: string, limit: number): Sample[];
  deleteServer(serverId: string): void;
  /** For tests and the bench: rows read by the last query(), and the rollup watermarks. */
  debug(): { lastRowsRead: number; watermarks: { minute: number | null; hour: number | null } };
}

export interface MetricsStoreOptions {
  /** The sampler's interval; sizes the raw level (levels.ts). Default 5. */
  sampleIntervalS?: number;
}

type RawRow = [t: number, tps_c: number | null, cpu_d: number, ram_kib: number, players: number, players_max: number];

// Multi-row INSERT: one statement call per CHUNK rows instead of one per row cuts the per-call cost of
// better-sqlite3 (binding + stepping), which is most of the cost of a small row.
const CHUNK = 64;
const COLS = 7;

export function sampleId(t: number): string {
  return String(t).padStart(10, '0');
}

export function parseSampleId(id: string): number | null {
  return /^\d{10}$/.test(id) ? Number(id) : null;
}

type Statements = ReturnType<typeof statements>;

/** Every statement of the store, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const rowValues = `(${new Array(COLS).fill('?').join(',')})`;
  const inserter = (table: string) => {
    const sql = (n: number) => `INSERT OR REPLACE INTO ${table} (${RAW_COLUMNS}) VALUES ${new Array(n).fill(rowValues).join(',')}`;
    const [chunk, one] = [db.prepare(sql(CHUNK)), db.prepare(sql(1))];
    return (params: (number | null)[]) => {
      let i = 0;
      for (; i + CHUNK * COLS <= params.length; i += CHUNK * COLS) chunk.run(params.slice(i, i + CHUNK * COLS));
      for (; i < params.length; i += COLS) one.run(params.slice(i, i + COLS));
    };
  };
  return {
    findKey: db.prepare<unknown[], number>('SELECT key FROM metric_servers WHERE server_id = ?').pluck(),
    addKey: db.prepare('INSERT INTO metric_servers (server_id) VALUES (?)'),
    insertInbox: inserter('metric_inbox'),
    insertRaw: inserter('metric_raw'),
    // Newest first from each table; the inbox holds the newer samples whenever it holds any (inbox.ts).
    selectLatest: ['metric_inbox', 'metric_raw'].map((table) => db.prepare<unknown[], RawRow>(
      `SELECT t, tps_c, cpu_d, ram_kib, players, players_max FROM ${table} WHERE server_key = ? ORDER BY t DESC LIMIT 1`,
    ).raw()),
    selectAfter: db.prepare<unknown[], RawRow>(`SELECT t, tps_c, cpu_d, ram_kib, players, players_max FROM (
      SELECT * FROM metric_raw WHERE server_key = :key AND t > :t
      UNION ALL SELECT * FROM metric_inbox WHERE server_key = :key AND t > :t
    ) ORDER BY t LIMIT :n`).raw(),
    deletes: ['metric_raw', 'metric_inbox', 'metric_minute', 'metric_hour', 'metric_servers'].map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE ${table === 'metric_servers' ? 'key' : 'server_key'} = ?`),
    ),
  };
}

/**
 * A server id's small integer key in the sample tables, cached: the cache is the one owner of the id → key map,
 * so forget() on deleteServer() is the only way an entry goes.
 */
function serverKeys(st: Statements) {
  const keys = new Map<string, number>();
  return {
    keyOf(serverId: string, create: boolean): number | null {
      const cached = keys.get(serverId);
      if (cached !== undefined) return cached;
      let key = st.findKey.get(serverId);
      if (key === undefined && create) key = Number(st.addKey.run(serverId).lastInsertRowid);
      if (key !== undefined) keys.set(serverId, key);
      return key ?? null;
    },
    forget: (serverId: string) => void keys.delete(serverId),
  };
}

/** Stored row → Sample. A round shares one timestamp, so its text form is made once, not once per server. */
function sampleDecoder(): (serverId: string, row: RawRow) => Sample {
  let lastT = -1;
  let lastAt = '';
  return (serverId, row) => {
    const [t, tpsC, cpuD, ramKib, players, playersMax] = row;
    if (t !== lastT) [lastT, lastAt] = [t, new Date(t * 1000).toISOString()];
    return {
      id: sampleId(t),
      server_id: serverId,
      at: lastAt,
      tps: tpsC === null ? null : tpsC / 100,
      cpu_percent: cpuD / 10,
      ram_bytes: ramKib * 1024,
      players_online: players,
      players_max: playersMax,
    };
  };
}

/** Sample → stored row: whole seconds and fixed-point values (the migration 003 columns). */
function encode(s: NewSample): RawRow {
  const ms = Date.parse(s.at);
  if (Number.isNaN(ms)) throw new Error(`sample of ${s.server_id} has an invalid at: ${s.at}`);
  return [
    Math.floor(ms / 1000),
    s.tps === null ? null : Math.round(s.tps * 100),
    Math.round(s.cpu_percent * 10),
    Math.round(s.ram_bytes / 1024),
    s.players_online,
    s.players_max,
  ];
}

interface StoreParts {
  db: Db;
  st: Statements;
  keys: ReturnType<typeof serverKeys>;
  toSample: ReturnType<typeof sampleDecoder>;
  rollup: ReturnType<typeof createRollup>;
}

/** write(): one sampling round in one transaction. */
function roundWriter({ db, st, keys, toSample, rollup }: StoreParts) {
  // Samples of minutes not rolled up yet go to the inbox; one older than the minute watermark (a clock step back)
  // goes straight to metric_raw, where it stays unrolled (rollup.ts). That split is the inbox invariant.
  return db.transaction((samples: NewSample[]): Sample[] => {
    const stored: Sample[] = [];
    const fresh: (number | null)[] = [];
    const late: (number | null)[] = [];
    const mark = rollup.marks().minute ?? -Infinity;
    for (const s of samples) {
      const row = encode(s);
      (row[0] >= mark ? fresh : late).push(keys.keyOf(s.server_id, true), row[0], row[1], row[2], row[3], row[4], row[5]);
      stored.push(toSample(s.server_id, row));
    }
    st.insertInbox(fresh);
    st.insertRaw(late);
    return stored;
  });
}

/** latest() and after(): the reads of single samples (window reads are window.ts's). */
function sampleReads({ st, keys, toSample }: StoreParts): Pick<MetricsStore, 'latest' | 'after'> {
  return {
    latest(serverId) {
      const key = keys.keyOf(serverId, false);
      if (key === null) return null;
      const row = st.selectLatest[0].get(key) ?? st.selectLatest[1].get(key);
      return row ? toSample(serverId, row) : null;
    },
    after(serverId, afterSampleId, limit) {
      const key = keys.keyOf(serverId, false);
      const t = parseSampleId(afterSampleId);
      if (key === null || t === null) return [];
      const n = Math.min(Math.max(Math.floor(limit), 1), 1000);
      return st.selectAfter.all({ key, t, n }).map((row) => toSample(serverId, row));
    },
  };
}

export function createMetricsStore(db: Db, clock: Clock, options: MetricsStoreOptions = {}): MetricsStore {
  const intervalS = options.sampleIntervalS ?? 5;
  const rollup = createRollup(db, retentionFor(intervalS));
  adoptUnrolled(db, rollup.marks().minute);
  const windows = createWindowReader(db, intervalS);
  const st = statements(db);
  const parts: StoreParts = { db, st, keys: serverKeys(st), toSample: sampleDecoder(), rollup };
  const { keys } = parts;
  const writeTx = roundWriter(parts);
  const { latest, after } = sampleReads(parts);
  const maintainTx = db.transaction((nowS: number) => rollup.run(nowS));
  const deleteTx = db.transaction((key: number) => st.deletes.forEach((d) => d.run(key)));

  return {
    write: (samples) => (samples.length === 0 ? [] : writeTx.immediate(samples)),
    maintain: () => void maintainTx.immediate(Math.floor(clock.now() / 1000)),
    latest,
    after,
    query(serverId, rangeMs, range = formatRange(rangeMs), endMs = clock.now()) {
      const nowS = Math.floor(clock.now() / 1000);
      const last = latest(serverId);
      const fresh = last !== null && nowS - Date.parse(last.at) / 1000 <= 3 * intervalS;
      const key = keys.keyOf(serverId, false);
      const rangeS = Math.floor(rangeMs / 1000);
      const toS = Math.floor(endMs / 1000);
      return windows.read({ serverId, key, range, rangeS, toS, nowS, marks: rollup.marks(), now: fresh ? last : null });
    },
    now: () => clock.now(),
    deleteServer(serverId) {
      const key = keys.keyOf(serverId, false);
      keys.forget(serverId);
      if (key !== null) deleteTx.immediate(key);
    },
    debug: () => ({ lastRowsRead: windows.lastRowsRead(), watermarks: rollup.marks() }),
  };
}
