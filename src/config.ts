import path from 'node:path';
import type { QuotaLimits } from './store/quotas-repo';
import { scryptCost, type ScryptCost } from './dashboard/passwords';
import { dnsSettings, type DnsSettings } from './dns/settings';

/** Every setting the operator can change, read from the environment in one place (README "Configuration"). */
export interface Config {
  port: number;
  /** Where clients reach the API (PUBLIC_URL), without a trailing slash: the spec's servers[0].url, problem types. */
  publicUrl: string;
  host: string;
  dataDir: string;
  dbFile: string;
  rateLimitPerMinute: number;
  /** The rate limit's window; 60 s unless an operator (or a test) needs another. */
  rateLimitWindowMs: number;
  gameHost: string;
  gamePortRange: [number, number];
  metricsIntervalMs: number;
  /** How long the disk watcher rests between two measurements of every server's folder. */
  diskCheckIntervalMs: number;
  trustProxy: boolean | number | string;
  /** The host names the service answers for, lowercase; empty: every host (RFC 9110 §15.5.20, 421 for others). */
  allowedHosts: string[];
  /** Origins whose scripts may call /v1 (CORS_ORIGINS): `*` (the default) or `https://tool.example.com,…`. */
  corsOrigins: string[];
  bodyLimitBytes: number;
  shutdownTimeoutMs: number;
  /** Open event streams per user (docs/conventions.md "Real-time"). */
  streamsPerUser: number;
  /** How long one event stream may stay open before the service ends it (the client resumes). */
  streamMaxLifetimeMs: number;
  /** Every account's quotas unless `gsh user set-quota` sets its own (docs/conventions.md "Quotas"). */
  quotas: QuotaLimits;
  /** Where cgroup file systems are mounted, for the games' limits; null (CGROUP_ROOT=off): no cgroups. */
  cgroupRoot: string | null;
  /** Where game servers run (RUNTIME): child processes of this host, or containers on a Docker engine. */
  runtime: 'local' | 'docker';
  /** The Docker engine's address (DOCKER_HOST), used with runtime `docker` and by `gsh image build`. */
  dockerHost: string;
  /** How often every node's engine is asked whether it answers (RUNTIME=docker; docs/architecture.md "Nodes"). */
  nodeCheckIntervalMs: number;
  /** The non-root user games run as in containers (DOCKER_GAME_USER, `uid:gid`). */
  dockerGameUser: { uid: number; gid: number };
  /** The service's own variables a game inherits (PATH, LANG); nothing else of this environment reaches a game. */
  gameEnv: Record<string, string>;
  /** Live API tokens one user may hold (docs/conventions.md "Authentication"); one more is 403 quota_exceeded. */
  tokensPerUser: number;
  /** Backups one user may keep after deleting their servers (deleteServer `keep_backups`); more is 403 quota_exceeded. */
  keptBackupsPerUser: number;
  /** Uploads, downloads and extractions of server files one user may have under way at once; one more is 429. */
  filesTransfersPerUser: number;
  /** How long a revoked or expired token's row is kept before the purge deletes it. */
  tokenRetentionMs: number;
  /** How long events are kept (EVENT_RETENTION_DAYS); the token purge's round deletes older ones. */
  eventRetentionMs: number;
  /** Webhooks (docs/architecture.md "Events and webhooks"; SECURITY.md, SSRF). */
  webhooks: { allowPrivate: boolean; timeoutMs: number; disableAfterMs: number; perUser: number; pendingPerWebhook: number; pendingPerUser: number };
  /** Members per server, schedules per server and tasks per schedule (docs/architecture.md "Sharing", "Schedules"). */
  sharing: { membersPerServer: number; schedulesPerServer: number; tasksPerSchedule: number };
  /** How often the purge of old token rows runs. */
  tokenPurgeIntervalMs: number;
  /** The dashboard's request limits, sign-in throttle and page token lifetime (docs/conventions.md "Authentication"). */
  dashboard: DashboardSettings;
  /** The operator's Prometheus metrics (README "Metrics"): off unless a port or a token is set. */
  prometheus: PrometheusSettings;
  /** NODE_ENV=test (jest sets it): settings only tests may use are taken (PASSWORD_SCRYPT_N below OWASP's). */
  testMode: boolean;
  /** SFTP_PORT: the SFTP server's port on HOST (README "SFTP"); null (`off` or `0`): no SFTP server. */
  sftpPort: number | null;
  /** DNS names for servers (DNS_ZONE, DNS_SERVER, DNS_TSIG_KEY, DNS_TTL_S, DNS_RESERVED_NAMES); null without DNS_ZONE. */
  dns: DnsSettings | null;
}

export interface PrometheusSettings {
  /** METRICS_PORT: a listener of its own serving only /metrics; null: none. */
  port: number | null;
  /** METRICS_HOST: the address that listener binds (loopback by default). */
  host: string;
  /** METRICS_TOKEN: the bearer token /metrics asks for; with it set, the main port serves /metrics too. */
  token: string | null;
}

export interface DashboardSettings {
  /** Requests per minute per client address for the page and its static files. */
  filesPerMinute: number;
  /** Requests per minute per session (per client address without one) for the other /dashboard routes but sign-in. */
  sessionPerMinute: number;
  /** Lifetime of the API token the page holds; the page renews it before it ends. */
  pageTokenTtlMs: number;
  /** Failed sign-ins of one email from one address before each further attempt must wait (doubling, capped). */
  signInFreeFailures: number;
  /** The cap of that wait. */
  signInMaxDelayMs: number;
  /** Failed sign-ins per client address (any email) per 15 minutes before unknown browsers there must wait. */
  signInAddressFailures: number;
  /** What new password hashes cost (PASSWORD_SCRYPT_N): OWASP's minimum, lower only in tests. */
  passwordCost: ScryptCost;
}

export class ConfigError extends Error {}

/**
 * PASSWORD_SCRYPT_N, scrypt's cost for new password hashes (src/dashboard/passwords.ts): 131072 (OWASP's minimum)
 * and above for any service; lower only with NODE_ENV=test, which jest sets, so a weak setting can never reach a
 * real deployment by mistake (SECURITY.md).
 */
function passwordCost(env: NodeJS.ProcessEnv): ScryptCost {
  const raw = env.PASSWORD_SCRYPT_N;
  const cost = scryptCost(raw === undefined || raw === '' ? 2 ** 17 : Number(raw), env.NODE_ENV === 'test'); // Config.testMode
  if (typeof cost === 'string') throw new ConfigError(`PASSWORD_SCRYPT_N ${cost}; got "${raw}".`);
  return cost;
}

/** The largest value a quota takes (QUOTA_* and `gsh user set-quota`): far beyond any host, within SQLite's integers. */
export const QUOTA_MAX = 1_000_000_000;

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return value;
}

export function portRange(raw: string | undefined): [number, number] {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(raw ?? '25565-25664');
  const [low, high] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!match || low < 1024 || high > 65535 || low > high) {
    throw new ConfigError(`GAME_PORT_RANGE must look like 25565-25664 (ports 1024-65535, low first); got "${raw}".`);
  }
  return [low, high];
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

/** Host names or IP literals (`[::1]` for IPv6), comma-separated; ports, paths and wildcards are refused. */
/** PUBLIC_URL: an absolute http(s) URL without query or fragment; default `http://localhost:<PORT>`. */
function publicUrl(raw: string | undefined, port: number): string {
  const url = (raw || `http://localhost:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/.test(url)) {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL like "https://api.example.com"; got "${raw}".`);
  }
  return url;
}

/** CORS_ORIGINS: `*`, or a comma-separated list of origins (`scheme://host[:port]`, as browsers send Origin). */
function corsOrigins(raw: string | undefined): string[] {
  const list = (raw ?? '*').split(',').map((o) => o.trim()).filter(Boolean);
  for (const o of list) {
    if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o)) {
      throw new ConfigError(`CORS_ORIGINS must be * or origins like "https://tool.example.com"; got "${o}".`);
    }
  }
  return list.length > 0 ? list : ['*'];
}

function allowedHosts(raw: string | undefined): string[] {
  const names = (raw ?? '').split(',').map((h) => h.trim().toLowerCase().replace(/\.$/, '')).filter((h) => h !== '');
  for (const name of names) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?)$/.test(name)) {
      throw new ConfigError(`ALLOWED_HOSTS must list host names or IP literals ("api.example.com,[::1]"), without ports; got "${name}".`);
    }
  }
  return names;
}

function cgroupRoot(raw: string | undefined): string | null {
  if (raw === 'off') return null;
  if (raw === undefined || raw === '') return '/sys/fs/cgroup';
  if (!path.isAbsolute(raw)) throw new ConfigError(`CGROUP_ROOT must be an absolute path or "off"; got "${raw}".`);
  return raw;
}

function runtimeKind(raw: string | undefined): 'local' | 'docker' {
  if (raw === undefined || raw === '' || raw === 'local') return 'local';
  if (raw === 'docker') return 'docker';
  throw new ConfigError(`RUNTIME must be "local" or "docker"; got "${raw}".`);
}

function dockerHost(raw: string | undefined): string {
  const url = raw || 'unix:///var/run/docker.sock';
  if (!/^unix:\/\/\/.+$|^(tcp|http):\/\/[^/]+:\d{1,5}\/?$/.test(url)) {
    throw new ConfigError(`DOCKER_HOST must look like unix:///var/run/docker.sock or tcp://host:2375; got "${url}".`);
  }
  return url;
}

/** `uid:gid`, both from 1 (never root) to 2^31-1. */
function gameUser(raw: string | undefined): { uid: number; gid: number } {
  const m = /^(\d{1,10}):(\d{1,10})$/.exec(raw || '1000:1000');
  const [uid, gid] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || uid < 1 || gid < 1 || uid > 2 ** 31 - 1 || gid > 2 ** 31 - 1) {
    throw new ConfigError(`DOCKER_GAME_USER must be uid:gid of a non-root user, like 1000:1000; got "${raw}".`);
  }
  return { uid, gid };
}

/** At least 32 visible ASCII characters, so it cannot be guessed the way a password can (SECURITY.md). */
function metricsToken(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^[\x21-\x7e]{32,200}$/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN must be 32 to 200 visible ASCII characters (e.g. `openssl rand -hex 32`).');
  }
  return raw;
}

function prometheus(env: NodeJS.ProcessEnv): PrometheusSettings {
  const port = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? null : int(env, 'METRICS_PORT', 0, 0, 65535);
  return { port, host: env.METRICS_HOST || '127.0.0.1', token: metricsToken(env.METRICS_TOKEN) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.DATA_DIR || './data');
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    publicUrl: publicUrl(env.PUBLIC_URL, int(env, 'PORT', 8080, 0, 65535)),
    host: env.HOST || '0.0.0.0',
    dataDir,
    dbFile: path.join(dataDir, 'gsh.sqlite'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000),
    rateLimitWindowMs: int(env, 'RATE_LIMIT_WINDOW_S', 60, 1, 3600) * 1000,
    gameHost: env.GAME_HOST || '127.0.0.1',
    gamePortRange: portRange(env.GAME_PORT_RANGE),
    metricsIntervalMs: int(env, 'METRICS_INTERVAL_S', 5, 1, 3600) * 1000,
    diskCheckIntervalMs: int(env, 'DISK_CHECK_INTERVAL_S', 60, 1, 86_400) * 1000,
    nodeCheckIntervalMs: int(env, 'NODE_CHECK_INTERVAL_S', 5, 1, 60) * 1000,
    trustProxy: trustProxy(env.TRUST_PROXY),
    allowedHosts: allowedHosts(env.ALLOWED_HOSTS),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    bodyLimitBytes: 64 * 1024,
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_S', 30, 1, 600) * 1000,
    streamsPerUser: int(env, 'STREAMS_PER_USER', 10, 1, 1000),
    streamMaxLifetimeMs: int(env, 'STREAM_MAX_LIFETIME_S', 1800, 1, 86_400) * 1000,
    // Defaults leave the default GAME_PORT_RANGE (100 ports) for ten accounts at their full servers quota, so one
    // account alone can never take every port (README "Configuration" has the sizing rule).
    quotas: {
      servers: int(env, 'QUOTA_SERVERS', 10, 0, QUOTA_MAX),
      running: int(env, 'QUOTA_RUNNING_SERVERS', 5, 0, QUOTA_MAX),
      memory_mb: int(env, 'QUOTA_MEMORY_MB', 8192, 0, QUOTA_MAX),
    },
    cgroupRoot: cgroupRoot(env.CGROUP_ROOT),
    runtime: runtimeKind(env.RUNTIME),
    dockerHost: dockerHost(env.DOCKER_HOST),
    dockerGameUser: gameUser(env.DOCKER_GAME_USER),
    gameEnv: { PATH: env.PATH || '/usr/local/bin:/usr/bin:/bin', LANG: env.LANG || 'C.UTF-8' },
    tokensPerUser: int(env, 'TOKENS_PER_USER', 50, 1, 100_000),
    keptBackupsPerUser: int(env, 'KEPT_BACKUPS_PER_USER', 20, 0, 100_000),
    filesTransfersPerUser: int(env, 'FILES_TRANSFERS_PER_USER', 4, 1, 1000),
    tokenRetentionMs: int(env, 'TOKEN_RETENTION_DAYS', 30, 0, 3650) * 86_400_000,
    eventRetentionMs: int(env, 'EVENT_RETENTION_DAYS', 30, 1, 3650) * 86_400_000,
    webhooks: {
      allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === 'true',
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_S', 10, 1, 60) * 1000,
      disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_S', 259_200, 60, 31_536_000) * 1000,
      perUser: int(env, 'WEBHOOKS_PER_USER', 10, 1, 1000),
      pendingPerWebhook: int(env, 'WEBHOOK_PENDING_PER_WEBHOOK', 10_000, 1, 10_000_000),
      pendingPerUser: int(env, 'WEBHOOK_PENDING_PER_USER', 25_000, 1, 100_000_000),
    },
    sharing: {
      membersPerServer: int(env, 'MEMBERS_PER_SERVER', 20, 1, 1000),
      schedulesPerServer: int(env, 'SCHEDULES_PER_SERVER', 10, 1, 1000),
      // The spec's ScheduleTasks allows 50 at most: more is a 400 before any quota is read.
      tasksPerSchedule: int(env, 'TASKS_PER_SCHEDULE', 10, 1, 50),
    },
    tokenPurgeIntervalMs: int(env, 'TOKEN_PURGE_INTERVAL_S', 3600, 1, 86_400) * 1000,
    dashboard: {
      filesPerMinute: int(env, 'DASHBOARD_FILES_PER_MINUTE', 600, 1, 1_000_000),
      sessionPerMinute: int(env, 'DASHBOARD_SESSION_PER_MINUTE', 60, 1, 1_000_000),
      pageTokenTtlMs: int(env, 'DASHBOARD_TOKEN_TTL_S', 600, 3, 3600) * 1000,
      signInFreeFailures: int(env, 'SIGN_IN_FREE_FAILURES', 5, 1, 100),
      signInMaxDelayMs: int(env, 'SIGN_IN_MAX_DELAY_S', 900, 1, 86_400) * 1000,
      signInAddressFailures: int(env, 'SIGN_IN_ADDRESS_FAILURES', 100, 1, 1_000_000),
      passwordCost: passwordCost(env),
    },
    prometheus: prometheus(env),
    testMode: env.NODE_ENV === 'test',
    // Off by default under jest (NODE_ENV=test), whose parallel files each start services on their own ports.
    dns: dnsSettings(env, (message) => new ConfigError(message)),
    sftpPort: env.SFTP_PORT === 'off' ? null : int(env, 'SFTP_PORT', env.NODE_ENV === 'test' ? 0 : 2022, 0, 65535) || null,
  };
}
