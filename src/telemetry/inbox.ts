import type { Db } from '../store/db';

/**
 * The raw inbox: where write() puts samples of minutes not yet rolled up.
 *
 * Why (issue 7, BENCHMARKS.md "Metrics"): metric_raw is clustered by (server_key, t) so one server's window is
 * one B-tree range. But a sampling round holds one sample of every server, so inserting it there dirtied one
 * leaf page per server: ~1,000 pages (4 MB of WAL, fsynced) per 1,000-server round, and ingest ran at ~10% of a
 * plain append. The inbox has the same layout but holds only about a minute of rounds, so a round lands on the
 * few dozen pages of a small table; once a minute maintain() rolls the closed minute up from the inbox and moves
 * its rows into metric_raw in one statement, sorted by metric_raw's key, so each server's leaf page is dirtied
 * once a minute instead of twelve times.
 *
 * Invariant (what keeps reads exact without de-duplication): with M the minute watermark, metric_raw holds
 * samples with t < M and the inbox holds samples with t >= M. write() sends a sample older than M (a clock step
 * back) straight to metric_raw, where it stays unrolled as before; maintain() moves inbox rows below the new M
 * right after rolling them. Readers take the raw level as metric_raw UNION ALL metric_inbox.
 *
 * The table is created by migration 005-metric-inbox; adoptUnrolled() moves rows that a database from before
 * that migration left unrolled in metric_raw.
 */
export const RAW_COLUMNS = 'server_key, t, tps_c, cpu_d, ram_kib, players, players_max';

/** Moves metric_raw rows at or after the minute watermark (all of them if there is none) into the inbox. */
export function adoptUnrolled(db: Db, minuteMark: number | null): void {
  const from = minuteMark ?? -Infinity;
  db.transaction(() => {
    // `server_key IN (…)`: one seek per server instead of a scan of the whole table (see rollup.ts).
    const where = 'WHERE server_key IN (SELECT key FROM metric_servers) AND t >= ?';
    db.prepare(`INSERT OR REPLACE INTO metric_inbox (${RAW_COLUMNS}) SELECT ${RAW_COLUMNS} FROM metric_raw ${where}`).run(from);
    db.prepare(`DELETE FROM metric_raw ${where}`).run(from);
  }).immediate();
}
