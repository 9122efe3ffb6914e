// One owner per table (issue 31 §2; docs/architecture.md "Who owns what"): every statement in src/ that writes a
// table (INSERT, UPDATE, DELETE, REPLACE) is in that table's one owner, as the table below names it. A table written
// somewhere else, or a new table without an owner here, fails. Migrations (src/store/migrations/) change the schema
// and are not counted. The time series have one owner too: the metrics store, whose rollup and inbox are its parts.
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..', 'src');
const METRICS_STORE = ['telemetry/metrics-store.ts', 'telemetry/rollup.ts', 'telemetry/inbox.ts'];

const OWNERS: Record<string, string[]> = {
  actions: ['store/actions-repo.ts'],
  alert_rules: ['store/alerts-repo.ts'],
  backups: ['store/backups-repo.ts'],
  crashes: ['store/crashes-repo.ts'],
  dns_records: ['store/dns-repo.ts'],
  dns_zone: ['store/dns-repo.ts'],
  events: ['store/events-repo.ts'],
  file_changes: ['store/file-changes-repo.ts'],
  idempotency_keys: ['store/idempotency-repo.ts'],
  kept_backups: ['store/kept-backups-repo.ts'],
  known_addresses: ['store/known-addresses-repo.ts'],
  members: ['store/members-repo.ts'],
  metric_hour: METRICS_STORE,
  metric_inbox: METRICS_STORE,
  metric_minute: METRICS_STORE,
  metric_raw: METRICS_STORE,
  metric_servers: METRICS_STORE,
  metric_watermarks: METRICS_STORE,
  nodes: ['store/nodes-repo.ts'],
  passkeys: ['store/second-factors-repo.ts'],
  pending_sign_ins: ['store/second-factors-repo.ts'],
  player_list_entries: ['store/player-lists-repo.ts'],
  player_list_switches: ['store/player-lists-repo.ts'],
  recovery_codes: ['store/second-factors-repo.ts'],
  runtime_processes: ['store/processes-repo.ts'],
  schedule_runs: ['store/schedules-repo.ts'],
  schedules: ['store/schedules-repo.ts'],
  schema_migrations: ['store/db.ts'],
  server_moves: ['store/moves-repo.ts'],
  server_recoveries: ['store/recoveries-repo.ts'],
  server_settings: ['store/settings-repo.ts'],
  servers: ['store/server-writes.ts'],
  session_tokens: ['store/sessions-repo.ts'],
  sessions: ['store/sessions-repo.ts'],
  ssh_keys: ['store/ssh-keys-repo.ts'],
  tokens: ['store/tokens-repo.ts'],
  totp_secrets: ['store/second-factors-repo.ts'],
  user_quotas: ['store/quotas-repo.ts'],
  users: ['store/users-repo.ts'],
  webhook_deliveries: ['store/delivery-writes.ts'],
  webhooks: ['store/webhooks-repo.ts'],
  webauthn_challenges: ['store/second-factors-repo.ts'],
};

const WRITES = /\b(?:UPDATE(?:\s+OR\s+\w+)?|INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+([a-z_]+)\b/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' || e.name === 'public' ? [] : sourceFiles(full);
    return /\.(ts|cjs|js)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every table some file of src/ writes, with the files that write it. */
function writers(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const file of sourceFiles(root)) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    for (const m of fs.readFileSync(file, 'utf8').matchAll(WRITES)) {
      if (!found.has(m[1])) found.set(m[1], new Set());
      found.get(m[1])!.add(rel);
    }
  }
  return found;
}

const found = writers();

test('the scan finds the writes (the servers table through its writer)', () => {
  expect(found.get('servers')).toEqual(new Set(['store/server-writes.ts']));
  expect(found.size).toBeGreaterThan(20);
});

test('every table written in src/ has an owner in this test', () => {
  expect([...found.keys()].filter((t) => !(t in OWNERS)).sort()).toEqual([]);
});

test.each(Object.entries(OWNERS))('%s is written only by its owner', (table, owners) => {
  const outside = [...(found.get(table) ?? [])].filter((f) => !owners.includes(f));
  expect(outside).toEqual([]);
});
