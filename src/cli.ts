import path from 'node:path';
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
import { createEngine } from './runtime/host/docker/engine';
import { buildImage } from './runtime/host/docker/image';
import { builtinSoftwareDir } from './runtime/host/select-environment';
import { loadSoftwareCatalog } from './runtime/software/software-catalog';
import { NODE_HELP, NODE_USAGE, runNodeCli } from './cli-nodes';
import { MOVE_HELP, MOVE_USAGE, runServerCli } from './cli-moves';
import { DB_HELP, DB_USAGE, runDbCli } from './cli-db';
import { runConfigCli } from './cli-config';
import { hasControlCharacters, printable } from './printable';
import { createOperatorStore, type OperatorStore } from './store';
import { createSecondFactorsRepo } from './store/second-factors-repo';
import { quotaNames, type QuotaName, type QuotaOverrides, type QuotasRepo } from './store/quotas-repo';

const USAGE = `Usage:
  gsh token create --email <email> --name <name> [--scopes servers:read,servers:write,tokens:manage] [--expires-in 30d]
  gsh token list --email <email>
  gsh token revoke --email <email> --id <token_id>
  gsh user create --email <email> --password <password> [--revoke-tokens]
  gsh user set-password --email <email> --password <password> [--revoke-tokens]
  gsh user reset-2fa --email <email>
  gsh user set-quota --email <email> [--servers <n>] [--running <n>] [--memory-mb <n>]
  gsh user quota --email <email>
  gsh image build
${NODE_USAGE}
${MOVE_USAGE}
${DB_USAGE}
  gsh config

Works on the service's DATA_DIR (default ./data), also while the service runs.
token create creates the user if needed and prints the new token alone on the last line of stdout.
user create creates a dashboard account, or sets the password of an existing one; user set-password sets the
password of an existing account only. A new password ends every dashboard session of the user, and with
--revoke-tokens revokes every API token of the user too.
user reset-2fa removes the account's second factor (authenticator app, passkeys, recovery codes) and any sign-in
waiting for one, so the password alone signs in again (for someone who lost their phone; check who asks first).
--password shows in the process list while the command runs (a moment); other local users could read it then.
user set-quota gives an existing user its own limits (a whole number, or "default" for the QUOTA_* setting) and
prints the user's quotas; user quota prints them.
image build builds the game image (RUNTIME=docker) on the engine at DOCKER_HOST from this host's Node, the games'
files and modules and the software folders, with no registry, replacing any image of the same name; the service
also builds it on each node's engine that lacks it.
${NODE_HELP}
${MOVE_HELP}
${DB_HELP}
config prints the configuration in effect for this environment (NAME=value), secrets hidden.`;

export class UsageError extends Error {}

/** "90d", "12h", "30m", "3600s" or plain seconds → seconds. */
export function parseDuration(raw: string): number {
  const match = /^(\d{1,6})([smhd]?)$/.exec(raw);
  if (!match) throw new UsageError(`--expires-in must look like 30d, 12h, 45m or 3600s; got "${raw}".`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  const seconds = Number(match[1]) * unit;
  if (seconds < 60 || seconds > 63_072_000) throw new UsageError('--expires-in must be from 60 seconds to 2 years.');
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
  out: (s: string) => void;
}

function flag(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

function knownUser(c: CommandContext) {
  const user = c.users.findByEmail(c.email);
  if (!user) throw new UsageError(`There is no user ${c.email}.`);
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
  if (password.length < min || password.length > max) throw new UsageError(`--password must be ${min} to ${max} characters.`);
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
    if (name.length > 64) throw new UsageError('--name may be at most 64 characters.');
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
    const user = knownUser(c);
    let after = '';
    for (;;) {
      const page = c.tokens.list(user.id, 100, after);
      for (const t of page.data) {
        c.out(`${t.id}\t${t.prefix}…\t${t.name}\t${t.scopes.join(',')}\texpires ${t.expires_at ?? 'never'}\tlast used ${t.last_used_at ?? 'never'}`);
      }
      if (!page.has_more) break;
      after = page.data[page.data.length - 1].id;
    }
  },
  'token revoke': (c) => {
    const user = knownUser(c);
    const id = required(flag(c.values, 'id'), '--id');
    if (!c.tokens.revoke(user.id, id)) throw new UsageError(`${c.email} has no token ${id}.`);
    c.out(`Revoked ${id}.`);
  },
};

/** `gsh image build`: the only command that talks to an engine, so the only asynchronous one. */
async function imageBuild(env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  try {
    const { dockerHost, dataDir, dockerGameUser } = loadConfig(env);
    // The same image the service builds: Node, the games' files and modules, the software folders (image.ts).
    const operatorDir = path.join(dataDir, 'software');
    const catalog = loadSoftwareCatalog({ operatorDir });
    const content = { imageFiles: catalog.imageFiles(), ...catalog.imageModules(), softwareDirs: [builtinSoftwareDir(), operatorDir], user: dockerGameUser };
    const name = await buildImage(createEngine(dockerHost), content, true);
    out(`Built image ${name} on ${dockerHost}.`);
    return 0;
  } catch (e) {
    err(`gsh: image build failed: ${(e as Error).message}`);
    return 1;
  }
}

/**
 * Runs one CLI command; returns the exit code (a promise of it for `image build` and `node …`). Output goes through
 * `out`/`err` so tests can read it.
 */
export function runCli(argv: string[], env: NodeJS.ProcessEnv, rawOut: (s: string) => void, rawErr: (s: string) => void): number | Promise<number> {
  // Every line any command prints goes through printable(): a name stored before the API refused C1 controls, an
  // operator's own input echoed back, or an engine's error text can hold escapes a terminal would act on.
  const out = (s: string) => rawOut(printable(s));
  const err = (s: string) => rawErr(printable(s));
  if (argv.length === 2 && argv[0] === 'image' && argv[1] === 'build') return imageBuild(env, out, err);
  if (argv[0] === 'node' && !argv.includes('--help') && !argv.includes('-h')) return runNodeCli(argv.slice(1), env, out, err);
  if (argv[0] === 'server' && !argv.includes('--help') && !argv.includes('-h')) return runServerCli(argv.slice(1), env, out, err);
  if (argv[0] === 'db' && !argv.includes('--help') && !argv.includes('-h')) return runDbCli(argv.slice(1), env, out, err);
  if (argv.length === 1 && argv[0] === 'config') return runConfigCli(env, out, err);
  try {
    const { positionals, values } = parseArgs({
      args: argv,
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
        help: { type: 'boolean', short: 'h' },
      },
    });
    const command = commands[positionals.slice(0, 2).join(' ')];
    if (values.help || !command) {
      (values.help ? out : err)(USAGE);
      return values.help ? 0 : 2;
    }
    const config = loadConfig(env);
    const db = openDb(config.dbFile);
    try {
      const email = required(values.email, '--email');
      if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email)) throw new UsageError(`"${email}" is not an email address.`);
      const store = createOperatorStore(db, systemClock, { defaults: config.quotas, plans });
      command({ values, email, db, users: store.users, tokens: store.tokens, quotas: store.quotas, store, config, tokensPerUser: config.tokensPerUser, out });
      return 0;
    } finally {
      db.close();
    }
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`gsh: ${(e as Error).message}\n\n${USAGE}`);
      return 2;
    }
    err(`gsh: ${(e as Error).message}`);
    return 1;
  }
}
