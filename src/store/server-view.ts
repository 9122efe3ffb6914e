import type { components } from '../../generated/v1';
import type { JsonText } from '../http/types';

// The answer's `state` is an open enum (openapi/v1.yaml x-open-enum, for clients); the service's is the known set.
export type Server = Omit<components['schemas']['Server'], 'state'> & { state: components['schemas']['ServerState'] };
export type ServerPage = components['schemas']['ServerList'];
export type MemberPermission = components['schemas']['MemberPermission'];
// Answers show permissions open (ShownMemberPermissions, x-open-enum); the service's are the known set.
export type ServerAccess = Omit<components['schemas']['ServerAccess'], 'permissions'> & { permissions: MemberPermission[] };

/** Every permission, in the spec's order: what an owner holds (Server.access). */
export const ALL_PERMISSIONS: readonly MemberPermission[] = ['console', 'power', 'settings', 'players', 'backups', 'alerts', 'files'];
export const OWNER_ACCESS: ServerAccess = { role: 'owner', permissions: [...ALL_PERMISSIONS] };

/** `access` as SQL, for a view its owner reads (and for the events its owner gets). */
const OWNER_ACCESS_SQL = `json('${JSON.stringify(OWNER_ACCESS)}')`;
/** The owner's email, which a member's `access` names (ServerAccess.owner_email: whom to ask for a permission). */
const OWNER_EMAIL_SQL = `(SELECT u.email FROM users u WHERE u.id = servers.user_id)`;
/** `access` of a member whose permissions (JSON) are bound as `@permissions`. */
const MEMBER_ACCESS_SQL = `json_object('role', 'member', 'permissions', json(@permissions), 'owner_email', ${OWNER_EMAIL_SQL})`;
/**
 * `access` of the caller bound as `@user_id`, for a page of servers that holds both their own and those shared with
 * them (members.email matches the caller's account: migration 027).
 */
const CALLER_ACCESS_SQL = `CASE WHEN user_id = @user_id THEN ${OWNER_ACCESS_SQL} ELSE json_object('role', 'member', 'permissions',
    json((SELECT m.permissions FROM members m JOIN users u ON u.email = m.email WHERE m.server_id = servers.id AND u.id = @user_id)),
    'owner_email', ${OWNER_EMAIL_SQL}) END`;

/**
 * `dns` (openapi/v1.yaml ServerDns): a subquery's JSON comes back as text, hence json() around it; null without a name or without a zone (dns_zone is empty unless DNS_ZONE is
 * set); `published` once the publisher's last accepted update was for this full name and address (migration 040).
 */
const DNS_SQL = `json((SELECT json_object('name', dns_name || '.' || z.zone,
    'status', CASE WHEN r.published_for = dns_name || '.' || z.zone || '|' || host || '|' || port || '|' || transport
      THEN 'published' ELSE 'pending' END,
    'ttl_seconds', z.ttl, 'error', r.last_error)
  FROM dns_zone z LEFT JOIN dns_records r ON r.server_id = servers.id WHERE dns_name IS NOT NULL))`;

/**
 * A `servers` row as the API shows it (the spec's `Server`), built by SQLite as JSON text: the one mapping from a
 * row to the view. Reads that only answer with it (getServer, listServers) send this text as it is, so a page of
 * servers costs one string per row instead of seventeen columns turned into JS values, mapped, and serialized
 * again (BENCHMARKS.md §1); everything else parses it (`parseServer`). Key order is the schema's.
 * - `address`: null until the server has a host and port (openapi/v1.yaml `Server.address`).
 * - `dns`: DNS_SQL above.
 * - `disk_used_mb`: rounded up, so `disk_used_mb > plan.disk_mb` exactly when the bytes are over the plan's; an
 *   integer division of non-negative integers plus (MiB − 1) is the ceiling.
 * - `backup_schedule`: as stored (migration 020) without `since`, which is ours, not the API's.
 * - `access`: the reader's (docs/architecture.md "Sharing"): the owner's, or a member's permissions.
 * SQLite's JSON functions give a nested json_object/json_remove result as JSON, not as a string (json1 subtypes).
 * Column names are unqualified: use it on `servers` without another table that has the same names.
 */
function serverJson(access: string): string {
  return `json_object(
  'id', id, 'name', name, 'plan', plan, 'version', version, 'software', software, 'game_version', game_version,
  'state', state, 'desired_state', desired_state,
  'address', CASE WHEN host IS NOT NULL AND port IS NOT NULL
    THEN json_object('host', host, 'port', port, 'transport', transport) END,
  'dns_name', dns_name,
  'dns', ${DNS_SQL},
  'disk_used_mb', (disk_used_bytes + 1048575) / 1048576,
  'disk_measured_at', disk_measured_at,
  'idle_stop_minutes', idle_stop_minutes,
  'backup_schedule', json_remove(backup_schedule, '$.since'),
  'access', ${access},
  'created_at', created_at, 'updated_at', updated_at)`;
}

/** The view as its owner sees it. */
export const SERVER_JSON = serverJson(OWNER_ACCESS_SQL);
/** The view as a member sees it: bind `@permissions`, their permissions as JSON. */
export const MEMBER_SERVER_JSON = serverJson(MEMBER_ACCESS_SQL);
/** The view as the caller bound as `@user_id` sees it, owner or member. */
export const CALLER_SERVER_JSON = serverJson(CALLER_ACCESS_SQL);

export function parseServer(json: string): Server {
  return JSON.parse(json) as Server;
}

/**
 * A page of servers (the spec's `ServerList`, docs/conventions.md "Collections") from up to `limit + 1` rows of
 * `[id, SERVER_JSON]`: the extra row only says there is more, and the cursor is the last shown server's id. `dnsZone`:
 * the list's `dns_zone` (dns_zone's row, null when DNS_ZONE is unset).
 */
export function pageJson(rows: [string, string][], limit: number, dnsZone: string | null): JsonText<ServerPage> {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const cursor = more ? JSON.stringify(shown[shown.length - 1][0]) : 'null';
  return `{"data":[${shown.map((r) => r[1]).join(',')}],"has_more":${more},"next_cursor":${cursor},"dns_zone":${JSON.stringify(dnsZone)}}` as JsonText<ServerPage>;
}
