import type { components } from '../../generated/v1';
import type { JsonText } from '../http/types';

export type Server = components['schemas']['Server'];
export type ServerPage = components['schemas']['ServerList'];

/**
 * A `servers` row as the API shows it (the spec's `Server`), built by SQLite as JSON text: the one mapping from a
 * row to the view. Reads that only answer with it (getServer, listServers) send this text as it is, so a page of
 * servers costs one string per row instead of seventeen columns turned into JS values, mapped, and serialized
 * again (BENCHMARKS.md §1); everything else parses it (`parseServer`). Key order is the schema's.
 * - `address`: null until the server has a host and port (openapi/v1.yaml `Server.address`).
 * - `disk_used_mb`: rounded up, so `disk_used_mb > plan.disk_mb` exactly when the bytes are over the plan's; an
 *   integer division of non-negative integers plus (MiB − 1) is the ceiling.
 * - `backup_schedule`: as stored (migration 020) without `since`, which is ours, not the API's.
 * SQLite's JSON functions give a nested json_object/json_remove result as JSON, not as a string (json1 subtypes).
 * Column names are unqualified: use it on `servers` without another table that has the same names.
 */
export const SERVER_JSON = `json_object(
  'id', id, 'name', name, 'plan', plan, 'version', version, 'software', software, 'game_version', game_version,
  'state', state, 'desired_state', desired_state,
  'address', CASE WHEN host IS NOT NULL AND port IS NOT NULL
    THEN json_object('host', host, 'port', port, 'transport', transport) END,
  'disk_used_mb', (disk_used_bytes + 1048575) / 1048576,
  'disk_measured_at', disk_measured_at,
  'idle_stop_minutes', idle_stop_minutes,
  'backup_schedule', json_remove(backup_schedule, '$.since'),
  'created_at', created_at, 'updated_at', updated_at)`;

export function parseServer(json: string): Server {
  return JSON.parse(json) as Server;
}

/**
 * A page of servers (the spec's `ServerList`, docs/conventions.md "Collections") from up to `limit + 1` rows of
 * `[id, SERVER_JSON]`: the extra row only says there is more, and the cursor is the last shown server's id.
 */
export function pageJson(rows: [string, string][], limit: number): JsonText<ServerPage> {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const cursor = more ? JSON.stringify(shown[shown.length - 1][0]) : 'null';
  return `{"data":[${shown.map((r) => r[1]).join(',')}],"has_more":${more},"next_cursor":${cursor}}` as JsonText<ServerPage>;
}
