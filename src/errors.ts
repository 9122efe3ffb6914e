import type { components } from '../generated/v1';

/**
 * The one registry of error codes (docs/conventions.md "Errors"). Every problem document the service sends is built
 * from an entry here; test/unit/errors.test.ts pins this table against the `code` enum in openapi/v1.yaml, so
 * the code and the contract cannot drift.
 *
 * `type` URIs resolve to the docs section that explains the code (RFC 9457 §3.1.1: "a URI reference that
 * identifies the problem type ... [that] when dereferenced, [provides] human-readable documentation").
 */
export const errorRegistry = {
  validation_failed: { status: 400, title: 'The request is not valid' },
  malformed_body: { status: 400, title: 'The request body is not valid JSON' },
  unauthorized: { status: 401, title: 'A valid bearer token is required' },
  insufficient_scope: { status: 403, title: 'The token lacks a scope this operation needs' },
  csrf_failed: { status: 403, title: 'The request failed the CSRF check' },
  not_found: { status: 404, title: 'No such resource' },
  server_not_found: { status: 404, title: 'No such server' },
  token_not_found: { status: 404, title: 'No such token' },
  webhook_not_found: { status: 404, title: 'No such webhook' },
  action_not_found: { status: 404, title: 'No such action' },
  method_not_allowed: { status: 405, title: 'The method is not allowed on this resource' },
  invalid_state: { status: 409, title: 'The server is not in a state that allows this' },
  // The next four end failed actions (Action.error.code); they are problems only if an action is run inline.
  port_in_use: { status: 409, title: "The server's port is taken by another process" },
  action_cancelled: { status: 409, title: 'The action was cancelled before it finished' },
  start_failed: { status: 502, title: 'The game failed to start' },
  start_timeout: { status: 504, title: 'The game did not become ready in time' },
  action_conflict: { status: 409, title: 'Another action is in progress on this server' },
  idempotency_in_flight: { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  payload_too_large: { status: 413, title: 'The request body is too large' },
  unsupported_media_type: { status: 415, title: 'The request body must be application/json' },
  // RFC 9110 §15.5.20: the request names a host this service does not answer for (ALLOWED_HOSTS).
  misdirected_request: { status: 421, title: 'This service does not answer for that host' },
  unknown_plan: { status: 422, title: 'No such plan' },
  unknown_version: { status: 422, title: 'No such version' },
  idempotency_key_reused: { status: 422, title: 'This Idempotency-Key was used with a different request' },
  rate_limited: { status: 429, title: 'Too many requests' },
  too_many_streams: { status: 429, title: 'Too many open event streams' },
  // FILES_TRANSFERS_PER_USER uploads, downloads and extractions under way (src/runtime/services/file-transfers.ts).
  too_many_transfers: { status: 429, title: 'Too many file transfers under way' },
  // RFC 6585 §5. Sent only by src/http/client-errors.ts, for requests Node's HTTP parser refuses (headers > 16 KiB).
  request_header_fields_too_large: { status: 431, title: 'The request headers are too large' },
  internal_error: { status: 500, title: 'Internal error' },
  capacity_exhausted: { status: 503, title: 'No capacity left for another server' },
  service_unavailable: { status: 503, title: 'The service is shutting down' },
  // docs/conventions.md "Quotas": carries the extension members `quota`, `limit` and `used` (quotaExceeded below).
  quota_exceeded: { status: 403, title: 'The request would take the account past a quota' },
  // A state conflict the owner can resolve (a plan with more disk), so 409 (docs/conventions.md "Errors"); also
  // ends a start action a disk measurement overtook (Action.error.code).
  disk_quota_exceeded: { status: 409, title: "The server's folder is over its plan's disk space" },
  backup_not_found: { status: 404, title: 'No such backup' },
  // Ends a failed restore action (Action.error.code): the archive was damaged or unsafe, or could not be swapped in.
  restore_failed: { status: 409, title: 'The backup could not be restored' },
  // A state conflict the owner resolves by deleting a backup (docs/architecture.md "Backups": retention).
  backup_limit_reached: { status: 409, title: "The server has as many backups as its plan keeps" },
  // RFC 9110 §15.5.17: a download's Range starts past the end of the file (src/http/send-file.ts).
  range_not_satisfiable: { status: 416, title: 'The range is not within the archive' },
  alert_rule_not_found: { status: 404, title: 'No such alert rule' },
  // A member of a shared server lacks the permission an operation needs (its `x-permission` in openapi/v1.yaml;
  // docs/conventions.md "Sharing"): carries the extension member `permission` (missingPermission below).
  missing_permission: { status: 403, title: 'You lack the permission this operation needs on this server' },
  member_not_found: { status: 404, title: 'No such member' },
  ssh_key_not_found: { status: 404, title: 'No such SSH key' },
  member_exists: { status: 409, title: 'That email is already a member of this server' },
  ssh_key_exists: { status: 409, title: 'That key is registered on your account already' },
  dns_name_taken: { status: 409, title: 'Another server has that DNS name' },
  dns_name_reserved: { status: 409, title: 'The operator keeps that DNS name' },
  dns_not_configured: { status: 409, title: 'This service publishes no DNS names' },
  schedule_not_found: { status: 404, title: 'No such schedule' },
  schedule_run_not_found: { status: 404, title: 'No such schedule run' },
  schedule_running: { status: 409, title: 'A run of this schedule is under way' },
  player_not_online: { status: 409, title: 'The player is not online on this server' },
  // A server's own files (openapi/v1.yaml tag Files; docs/architecture.md "Server files").
  file_not_found: { status: 404, title: 'No such file or folder' },
  file_conflict: { status: 409, title: 'The files are not as this operation needs' },
  file_read_only: { status: 403, title: 'The service writes this file; change it through the API' },
  precondition_failed: { status: 412, title: 'The file is not as the precondition says' },
  length_required: { status: 411, title: 'The upload needs a Content-Length' },
  // RFC 4918 §11.5: the write would take the server past its plan's disk; `limit` and `used` in bytes.
  insufficient_storage: { status: 507, title: "Not enough room left in the server's disk" },
  unsafe_archive: { status: 422, title: 'The archive is damaged or unsafe' },
  // getServerSftp where the operator set SFTP_PORT=off (openapi/v1.yaml tag SSH keys): nothing to reach, so 404.
  sftp_disabled: { status: 404, title: 'This service runs no SFTP server' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorRegistry;

type ServerState = components['schemas']['ServerState'];
type QuotaName = components['schemas']['QuotaName'];
type RequiredPermission = components['schemas']['RequiredPermission'];


/** One entry of a validation failure: a JSON Pointer into the request and what is wrong there. */
export interface FieldError {
  pointer: string;
  detail: string;
  /** The JSON Schema keyword a schema-refused value broke, and its bound (the spec's FieldError.rule and limit). */
  rule?: string;
  limit?: number;
}

/**
 * The keyword a schema-refused value broke and its bound (an Ajv error's `keyword` and `params.limit`), so a client
 * can word it for its user (the dashboard: "Give the server a name") instead of showing Ajv's text. Not for a body
 * that is no JSON (`parse`).
 */
export function schemaRule(e: { keyword: string; params: object }): Pick<FieldError, 'rule' | 'limit'> {
  if (e.keyword === 'parse') return {};
  const limit = (e.params as { limit?: unknown }).limit;
  return { rule: e.keyword.slice(0, 50), ...(typeof limit === 'number' && Number.isFinite(limit) ? { limit } : {}) };
}

/**
 * RFC 9457 §3.2 extension members, for a code that carries facts a client acts on: `quota_exceeded` names the
 * quota, its limit and what is in use (docs/conventions.md "Quotas"); a 409 names the server's current `state`
 * and the conflicting `action_id` where there is one. The spec's Problem schema declares each member.
 */
export interface ProblemExtensions {
  /** The spec's QuotaName: a quota not listed there does not compile. */
  quota?: QuotaName;
  limit?: number;
  used?: number;
  state?: ServerState;
  action_id?: string;
  /** `missing_permission` only: what the operation needs on the shared server. */
  permission?: RequiredPermission;
}

/**
 * The error every layer throws (handlers, repositories, the runtime). The HTTP layer turns it into an RFC 9457
 * problem document; nothing matches on message text (docs/conventions.md "Errors": codes, never message text).
 */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
    /** Extension members of the problem document (RFC 9457 §3.2), such as a quota's `limit` and `used`. */
    readonly extensions?: ProblemExtensions,
  ) {
    // A problem is an answer, not a fault in the service: nothing reads its stack, so none is captured. Capturing
    // one cost 2–5 µs per refused request at V8's default depth of 10 frames (13 µs at jest's 100), against
    // 0.25 µs without; a flood of 401s and 429s pays it on every request.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = depth;
    this.name = 'AppError';
    this.status = errorRegistry[code].status;
  }
}

/**
 * 403 quota_exceeded (docs/conventions.md "Quotas"): `quota` is the quota's name as GET /v1/quota shows it,
 * `limit` its limit and `used` what is in use before the refused request.
 */
/** 409 invalid_state, naming the server's current state as the `state` member (docs/conventions.md "Errors"). */
export function invalidState(state: ServerState, detail: string): AppError {
  return new AppError('invalid_state', detail, undefined, undefined, { state });
}

export function quotaExceeded(quota: QuotaName, limit: number, used: number, detail: string): AppError {
  return new AppError('quota_exceeded', detail, undefined, undefined, { quota, limit, used });
}

/** 403 missing_permission, naming what the operation needs on this shared server (docs/conventions.md "Sharing"). */
export function missingPermission(permission: RequiredPermission, detail: string): AppError {
  return new AppError('missing_permission', detail, undefined, undefined, { permission });
}

/**
 * An error's message, whatever made it. Not `instanceof Error`: an error made in another realm (under jest, another
 * test file's globals, or Node's own for fs and child-process errors) is no instance of this realm's Error.
 */
export function messageOf(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}
