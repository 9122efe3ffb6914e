// `gsh config`: the configuration in effect, as the service would read it from this environment, every secret
// hidden (README "Configuration").
import { loadConfig, type Config } from './config';

type Setting = [name: string, value: (c: Config) => unknown, secret?: 'secret'];

const seconds = (ms: number) => ms / 1000;

/** Every variable src/config.ts reads (test/unit/cli-config.test.ts keeps the two in step), in README order. */
const settings: Setting[] = [
  ['PORT', (c) => c.port],
  ['HOST', (c) => c.host],
  ['DATA_DIR', (c) => c.dataDir],
  ['RATE_LIMIT_PER_MINUTE', (c) => c.rateLimitPerMinute],
  ['RATE_LIMIT_WINDOW_S', (c) => seconds(c.rateLimitWindowMs)],
  ['GAME_HOST', (c) => c.gameHost],
  ['GAME_PORT_RANGE', (c) => c.gamePortRange.join('-')],
  ['METRICS_INTERVAL_S', (c) => seconds(c.metricsIntervalMs)],
  ['DISK_CHECK_INTERVAL_S', (c) => seconds(c.diskCheckIntervalMs)],
  ['TRUST_PROXY', (c) => c.trustProxy],
  ['ALLOWED_HOSTS', (c) => (c.allowedHosts.length ? c.allowedHosts.join(',') : '(every host)')],
  ['CORS_ORIGINS', (c) => c.corsOrigins.join(',')],
  ['PUBLIC_URL', (c) => c.publicUrl],
  ['SHUTDOWN_TIMEOUT_S', (c) => seconds(c.shutdownTimeoutMs)],
  ['SFTP_PORT', (c) => c.sftpPort ?? 'off'],
  ['FILES_TRANSFERS_PER_USER', (c) => c.filesTransfersPerUser],
  ['STREAMS_PER_USER', (c) => c.streamsPerUser],
  ['STREAM_MAX_LIFETIME_S', (c) => seconds(c.streamMaxLifetimeMs)],
  ['QUOTA_SERVERS', (c) => c.quotas.servers],
  ['QUOTA_RUNNING_SERVERS', (c) => c.quotas.running],
  ['QUOTA_MEMORY_MB', (c) => c.quotas.memory_mb],
  ['CGROUP_ROOT', (c) => c.cgroupRoot ?? 'off'],
  ['RUNTIME', (c) => c.runtime],
  ['DOCKER_HOST', (c) => c.dockerHost],
  ['NODE_CHECK_INTERVAL_S', (c) => seconds(c.nodeCheckIntervalMs)],
  ['DOCKER_GAME_USER', (c) => `${c.dockerGameUser.uid}:${c.dockerGameUser.gid}`],
  ['TOKENS_PER_USER', (c) => c.tokensPerUser],
  ['KEPT_BACKUPS_PER_USER', (c) => c.keptBackupsPerUser],
  ['TOKEN_RETENTION_DAYS', (c) => c.tokenRetentionMs / 86_400_000],
  ['TOKEN_PURGE_INTERVAL_S', (c) => seconds(c.tokenPurgeIntervalMs)],
  ['DASHBOARD_FILES_PER_MINUTE', (c) => c.dashboard.filesPerMinute],
  ['DASHBOARD_SESSION_PER_MINUTE', (c) => c.dashboard.sessionPerMinute],
  ['DASHBOARD_TOKEN_TTL_S', (c) => seconds(c.dashboard.pageTokenTtlMs)],
  ['SIGN_IN_FREE_FAILURES', (c) => c.dashboard.signInFreeFailures],
  ['SIGN_IN_MAX_DELAY_S', (c) => seconds(c.dashboard.signInMaxDelayMs)],
  ['SIGN_IN_ADDRESS_FAILURES', (c) => c.dashboard.signInAddressFailures],
  ['PASSWORD_SCRYPT_N', (c) => c.dashboard.passwordCost.N],
  ['NODE_ENV', (c) => (c.testMode ? 'test' : '(not test)')],
  ['EVENT_RETENTION_DAYS', (c) => c.eventRetentionMs / 86_400_000],
  ['WEBHOOK_ALLOW_PRIVATE', (c) => c.webhooks.allowPrivate],
  ['WEBHOOK_TIMEOUT_S', (c) => seconds(c.webhooks.timeoutMs)],
  ['WEBHOOK_DISABLE_AFTER_S', (c) => seconds(c.webhooks.disableAfterMs)],
  ['WEBHOOKS_PER_USER', (c) => c.webhooks.perUser],
  ['WEBHOOK_PENDING_PER_WEBHOOK', (c) => c.webhooks.pendingPerWebhook],
  ['WEBHOOK_PENDING_PER_USER', (c) => c.webhooks.pendingPerUser],
  ['MEMBERS_PER_SERVER', (c) => c.sharing.membersPerServer],
  ['SCHEDULES_PER_SERVER', (c) => c.sharing.schedulesPerServer],
  ['TASKS_PER_SCHEDULE', (c) => c.sharing.tasksPerSchedule],
  ['METRICS_PORT', (c) => c.prometheus.port ?? '(off)'],
  ['METRICS_HOST', (c) => c.prometheus.host],
  ['METRICS_TOKEN', (c) => c.prometheus.token, 'secret'],
];

/** Variables config.ts reads that are not settings of the service: what a game inherits from it. */
export const INHERITED = ['PATH', 'LANG'];
export const settingNames = settings.map(([name]) => name);

/**
 * `gsh config`: one `NAME=value` line per setting, with the value in effect; `(default)` marks a value the
 * environment does not set. A secret is never printed: only whether it is set. Exit 1 with the clear message of
 * an invalid setting, as `npm start` would stop with it.
 */
export function runConfigCli(env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): number {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (e) {
    err(`gsh: ${(e as Error).message}`);
    return 1;
  }
  for (const [name, value, secret] of settings) {
    const v = value(config);
    const shown = secret ? (v === null ? '(not set)' : '(set, hidden)') : String(v);
    out(`${name}=${shown}${env[name] === undefined || env[name] === '' ? '  (default)' : ''}`);
  }
  return 0;
}
