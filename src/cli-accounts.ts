// `gsh token …` and `gsh user …`: the operator's API tokens and dashboard accounts (README "Command line",
// "The dashboard"). The command names and flags are an interface operators' scripts depend on: keep them. Exit codes
// and usage errors follow src/cli-usage.ts.
import { parseArgs } from 'node:util';
import { loadConfig, QUOTA_MAX, type Config } from './config';
import { openDb, type Db } from './store/db';
import { systemClock } from './clock';
import type { UsersRepo } from './store/users-repo';
import type { TokensRepo } from './store/tokens-repo';
import { scopes as allScopes, type Scope } from './auth/tokens';
import { hashPasswordSync, PASSWORD_LENGTH } from './dashboard/passwords';
import { setPassword } from './dashboard/accounts';
import { plans } from './catalog/plans';
import { hasControlCharacters } from './printable';
import { createOperatorStore, type OperatorStore } from './store';
import { createSecondFactorsRepo } from './store/second-factors-repo';
import { quotaNames, type QuotaName, type QuotaOverrides, type QuotasRepo } from './store/quotas-repo';
import { failure, jsonLine, UsageError, type Print } from './cli-usage';

export const TOKEN_USAGE = `  gsh token create --email <email> --name <name> [--scopes servers:read,servers:write,tokens:manage] [--expires-in 30d]
  gsh token list --email <email> [--json]
  gsh token revoke --email <email> --id <token_id>`;

export const TOKEN_HELP = `token create creates the user if needed and prints the new token alone on the last line of stdout. --name is
1 to 64 characters; --scopes a comma-separated list of ${allScopes.join(', ')} (default: all); --expires-in
a whole number of seconds (s, or no unit), minutes (m), hours (h) or days (d), from 60 seconds to 2 years
(default: never). A user holds at most TOKENS_PER_USER live tokens, through the API and the CLI alike.
token list prints the user's live tokens, one a line: id, prefix, name, scopes, expiry, last use; never a secret.
With --json it prints one JSON array of objects with the API's Token fields: id, name, prefix, scopes (array of
strings), created_at, expires_at and last_used_at (RFC 3339 times; null for never).
token revoke revokes a token and every token made through it.`;

export const USER_USAGE = `  gsh user create --email <email> --password <password> [--revoke-tokens]
  gsh user set-password --email <email> --password <password> [--revoke-tokens]
  gsh user reset-2fa --email <email>
  gsh user set-quota --email <email> [--servers <n>] [--running <n>] [--memory-mb <n>]
  gsh user quota --email <email>`;

export const USER_HELP = `user create creates a dashboard account, or sets the password of an existing one; user set-password sets the
password of an existing account only. A password is ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters. A new password ends every
dashboard session of the user, and with --revoke-tokens revokes every API token of the user too. --password
shows in the process list while the command runs (a moment); other local users could read it then.
user reset-2fa removes the account's second factor (authenticator app, passkeys, recovery codes) and any sign-in
waiting for one, so the password alone signs in again (for someone who lost their phone; check who asks first).
user set-quota gives an existing user its own limits: --servers, --running and --memory-mb each take a whole
number from 0 to ${QUOTA_MAX}, or "default" for the QUOTA_* setting; it prints the user's quotas, as user quota does.`;

/** "90d", "12h", "30m", "3600s" or plain seconds → seconds. */
export function parseDuration(raw: string): number {
  const allowed = 'a whole number of seconds (s), minutes (m), hours (h) or days (d), from 60 seconds to 2 years, like 30d';
  const match = /^(\d{1,6})([smhd]?)$/.exec(raw);
  if (!match) throw new UsageError(`--expires-in takes ${allowed}; got "${raw}".`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  const seconds = Number(match[1]) * unit;
  if (seconds < 60 || seconds > 63_072_000) throw new UsageError(`--expires-in takes ${allowed}; "${raw}" is ${seconds < 60 ? 'shorter' : 'longer'}.`);
  return seconds;
}

function parseScopes(raw: string | undefined): Scope[] {
  const list = (raw ?? allScopes.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = list.filter((s) => !(allScopes as readonly string[]).includes(s));
  if (unknown.length || list.length === 0) {
    throw new UsageError(`--scopes takes a comma-separated list of ${allScopes.join(', ')}; got "${raw}".`);
  }
  return [...new Set(list)] as Scope[];
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required.`);
  return value;
}

type Values = Record<string, string | boolean | undefined>;
interface CommandContext {
  values: Values;
  email: string;
  db: Db;
  users: UsersRepo;
  tokens: TokensRepo;
  quotas: QuotasRepo;
  /** Every repository a command may use (createOperatorStore); the three above are its most used. */
  store: OperatorStore;
  config: Config;
  /** TOKENS_PER_USER, which binds the CLI as it binds the API. */
  tokensPerUser: number;
  out: Print;
}

function flag(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A user that is not there is a refusal (exit 1), not a usage error: the command line itself was right. */
function knownUser(c: CommandContext) {
  const user = c.users.findByEmail(c.email);
  if (!user) throw new Error(`There is no user ${c.email}.`);
  return user;
}

/** The flag of each quota (`--memory-mb` for memory_mb). */
const quotaFlags: Record<QuotaName, string> = { servers: 'servers', running: 'running', memory_mb: 'memory-mb' };

/** Every quota flag given, checked before anything is written: a whole number, or `default` (null). */
function parseQuotas(values: Values): QuotaOverrides {
  const changes: QuotaOverrides = {};
  for (const name of quotaNames) {
    const raw = flag(values, quotaFlags[name]);
    if (raw === undefined) continue;
    if (raw !== 'default' && !(/^\d{1,10}$/.test(raw) && Number(raw) <= QUOTA_MAX)) {
      throw new UsageError(`--${quotaFlags[name]} takes a whole number from 0 to ${QUOTA_MAX}, or "default"; got "${raw}".`);
    }
    changes[name] = raw === 'default' ? null : Number(raw);
  }
  if (Object.keys(changes).length === 0) throw new UsageError('Name at least one of --servers, --running, --memory-mb.');
  return changes;
}

function printQuotas(c: CommandContext, userId: string) {
  const quota = c.quotas.get(userId);
  const own = c.quotas.overrides(userId);
  c.out(`Quotas of ${c.email}:`);
  for (const name of quotaNames) {
    const source = own[name] !== undefined ? `this user's own; default ${c.config.quotas[name]}` : 'default';
    c.out(`${name.padEnd(9)}  limit ${quota[name].limit} (${source}), used ${quota[name].used}`);
  }
  const ports = c.config.gamePortRange[1] - c.config.gamePortRange[0] + 1;
  if (quota.servers.limit >= ports) c.out(`Note: ${quota.servers.limit} servers can take every one of the ${ports} game ports (GAME_PORT_RANGE).`);
}

function newPassword(c: CommandContext): string {
  const password = required(flag(c.values, 'password'), '--password');
  const { min, max } = PASSWORD_LENGTH;
  if (password.length < min || password.length > max) throw new UsageError(`--password must be ${min} to ${max} characters; this one is ${password.length}.`);
  return password;
}

/** Sets the password the one way the dashboard does too (src/dashboard/accounts.ts); says what it ended. */
function changePassword(c: CommandContext, userId: string, password: string): string {
  const stores = { db: c.db, ...c.store };
  const revokeTokens = c.values['revoke-tokens'] === true;
  const { sessionsEnded, tokensRevoked } = setPassword(stores, userId, hashPasswordSync(password, c.config.dashboard.passwordCost), { revokeTokens });
  const revoked = revokeTokens ? `; revoked ${tokensRevoked} API token(s)` : '';
  return `ended ${sessionsEnded} dashboard session(s)${revoked}`;
}

/** Every live token of the user, oldest first, page by page. */
function allTokens(c: CommandContext, userId: string) {
  const all = [];
  for (let after = ''; ; ) {
    const page = c.tokens.list(userId, 100, after);
    all.push(...page.data);
    if (!page.has_more) return all;
    after = page.data[page.data.length - 1].id;
  }
}

/** `gsh <group> <command>`, one function each; every command takes --email. */
const commands: Partial<Record<string, (c: CommandContext) => void>> = {
  'user create': (c) => {
    const password = newPassword(c);
    const existed = c.users.findByEmail(c.email) !== undefined;
    const user = c.users.ensure(c.email);
    const outcome = changePassword(c, user.id, password);
    c.out(existed ? `Set the password of ${c.email}; ${outcome}.` : `Created user ${c.email}.`);
  },
  'user set-password': (c) => {
    const password = newPassword(c);
    const user = knownUser(c);
    c.out(`Set the password of ${c.email}; ${changePassword(c, user.id, password)}.`);
  },
  'user reset-2fa': (c) => {
    const user = knownUser(c);
    const had = createSecondFactorsRepo(c.db, systemClock).removeAll(user.id);
    const app = had.totp ? 'the authenticator app' : 'no authenticator app';
    c.out(`Reset the second factor of ${c.email}: removed ${app}, ${had.passkeys} passkey(s), ${had.recoveryCodes} unused recovery code(s). The password alone signs in now.`);
  },
  'user set-quota': (c) => {
    const changes = parseQuotas(c.values);
    const user = knownUser(c);
    c.quotas.set(user.id, changes);
    printQuotas(c, user.id);
  },
  'user quota': (c) => printQuotas(c, knownUser(c).id),
  'token create': (c) => {
    const name = required(flag(c.values, 'name'), '--name');
    if (name.length > 64) throw new UsageError(`--name may be at most 64 characters; this one is ${name.length}.`);
    // The API's rule for a token's name (openapi/v1.yaml CreateTokenRequest): no control characters, C1 included.
    if (hasControlCharacters(name)) throw new UsageError('--name may not hold control characters (U+0000–U+001F, U+007F–U+009F) or unpaired surrogates.');
    // Every flag is checked before anything is written: a refused command changes nothing.
    const scopes = parseScopes(flag(c.values, 'scopes'));
    const expiresIn = flag(c.values, 'expires-in');
    const expiresInSeconds = expiresIn ? parseDuration(expiresIn) : null;
    // One transaction: past the user's cap of live tokens nothing is written, not even a new user.
    const token = c.db.transaction(() => {
      const user = c.users.ensure(c.email);
      return c.tokens.create(user.id, { name, scopes, expiresInSeconds }, { perUser: c.tokensPerUser });
    }).immediate();
    c.out(`Created token ${token.id} (${token.scopes.join(', ')}) for ${c.email}. It is shown only now:`);
    c.out(token.token);
  },
  'token list': (c) => {
    const tokens = allTokens(c, knownUser(c).id);
    if (c.values.json === true) {
      // The fields TOKEN_HELP names, picked one by one: a field added to Token later does not change this output.
      c.out(jsonLine(tokens.map((t) => ({ id: t.id, name: t.name, prefix: t.prefix, scopes: t.scopes, created_at: t.created_at, expires_at: t.expires_at, last_used_at: t.last_used_at }))));
      return;
    }
    for (const t of tokens) {
      c.out(`${t.id}\t${t.prefix}…\t${t.name}\t${t.scopes.join(',')}\texpires ${t.expires_at ?? 'never'}\tlast used ${t.last_used_at ?? 'never'}`);
    }
  },
  'token revoke': (c) => {
    const id = required(flag(c.values, 'id'), '--id'); // the command line first: a usage error is exit 2 for any user
    const user = knownUser(c);
    if (!c.tokens.revoke(user.id, id)) throw new Error(`${c.email} has no token ${id}.`);
    c.out(`Revoked ${id}.`);
  },
};

/** Runs `gsh token|user <command> …` (`args` from the command's first word); answers the exit code. */
export function runAccountCli(args: string[], env: NodeJS.ProcessEnv, out: Print, err: Print): number {
  try {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        scopes: { type: 'string' },
        'expires-in': { type: 'string' },
        id: { type: 'string' },
        password: { type: 'string' },
        servers: { type: 'string' },
        running: { type: 'string' },
        'memory-mb': { type: 'string' },
        'revoke-tokens': { type: 'boolean' },
        json: { type: 'boolean' },
      },
    });
    const command = commands[positionals.slice(0, 2).join(' ')];
    if (!command) throw new UsageError(`There is no command "${positionals.slice(0, 2).join(' ')}".`);
    if (positionals.length > 2) throw new UsageError(`Unexpected argument "${positionals[2]}".`);
    const email = required(values.email, '--email');
    if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email)) throw new UsageError(`--email takes an email address; got "${email}".`);
    const config = loadConfig(env);
    const db = openDb(config.dbFile);
    try {
      const store = createOperatorStore(db, systemClock, { defaults: config.quotas, plans });
      command({ values, email, db, users: store.users, tokens: store.tokens, quotas: store.quotas, store, config, tokensPerUser: config.tokensPerUser, out });
      return 0;
    } finally {
      db.close();
    }
  } catch (e) {
    return failure(e, err, `${TOKEN_USAGE}\n${USER_USAGE}`, args);
  }
}
