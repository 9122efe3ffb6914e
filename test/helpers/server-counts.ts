import type { Db } from '../../src/store/db';

/**
 * Where migration 026's counters differ from the rows they count (empty when they agree): each account's servers
 * and running servers per plan (quotas-repo.ts RUNNING), each node's servers per plan. A counter of zero and a
 * missing counter are the same.
 */
export function countsDrift(db: Db): string[] {
  const rows = (sql: string) => new Set((db.prepare(sql).all() as Record<string, unknown>[]).map((r) => JSON.stringify(Object.values(r))));
  const compare = (what: string, counted: Set<string>, actual: Set<string>) => [
    ...[...counted].filter((r) => !actual.has(r)).map((r) => `${what} counter ${r} has no match in the rows`),
    ...[...actual].filter((r) => !counted.has(r)).map((r) => `${what} rows ${r} have no counter`),
  ];
  const running = `(desired_state = 'running' OR state IN ('starting', 'running', 'stopping'))`;
  return [
    ...compare('server',
      rows('SELECT user_id, plan, servers, running FROM server_counts WHERE servers > 0'),
      rows(`SELECT user_id, plan, COUNT(*), SUM(${running}) FROM servers GROUP BY user_id, plan`)),
    ...compare('node',
      rows('SELECT node, plan, servers FROM node_counts WHERE servers > 0'),
      rows('SELECT node, plan, COUNT(*) FROM servers WHERE node IS NOT NULL GROUP BY node, plan')),
  ];
}
