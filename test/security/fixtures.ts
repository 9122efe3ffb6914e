import type { Scope } from '../../src/auth/tokens';
import type { TestApp } from '../helpers/app';
import { sleep } from './helpers';

export const ALL_SCOPES: Scope[] = ['servers:read', 'servers:write', 'tokens:manage'];

/** The tokens each fuzzed user holds, by what they may do. */
export const TOKEN_ROLES = {
  caller: ALL_SCOPES,
  spare: ALL_SCOPES,
  readonly: ['servers:read'],
  manageOnly: ['tokens:manage'],
} as const satisfies Record<string, readonly Scope[]>;
export type TokenRole = keyof typeof TOKEN_ROLES;

export interface UserFixture {
  email: string;
  userId: string;
  tokens: Record<TokenRole, { id: string; secret: string }>;
  /** A stopped server with its files installed. */
  server: string;
  /** A finished (stop) action on `server`. */
  action: string;
  /** A webhook with a delivery (never made: the fuzzer's service runs no dispatcher). */
  webhook: string;
  /** A member of `server` (an invited email), a schedule of it whose one task stops it, and a run of that schedule. */
  member: string;
  schedule: string;
  run: string;
  /** A server kept in state `deleting` for ever: no action can start it (requestAction answers invalid_state). */
  sink?: string;
}

const NEW_SERVER = { name: 'fixture', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' };

/**
 * Users with servers, actions and tokens that fuzzed requests aim at, and the repair that puts them back after an
 * accepted request deleted or revoked one (ids change; tests resolve them at send time).
 */
export function fixtureKeeper(t: TestApp) {
  const { users, tokens, servers } = t.store;
  const q = {
    tokenActive: t.db.prepare('SELECT revoked_at IS NULL FROM tokens WHERE id = ?').pluck(),
    server: t.db.prepare('SELECT state FROM servers WHERE id = ?').pluck(),
    serversOf: t.db.prepare('SELECT id, state FROM servers WHERE user_id = ?'),
    action: t.db.prepare('SELECT status FROM actions WHERE id = ?').pluck(),
    webhook: t.db.prepare('SELECT 1 FROM webhooks WHERE id = ?').pluck(),
    member: t.db.prepare('SELECT 1 FROM members WHERE id = ?').pluck(),
    schedule: t.db.prepare('SELECT 1 FROM schedules WHERE id = ?').pluck(),
    run: t.db.prepare('SELECT 1 FROM schedule_runs WHERE id = ?').pluck(),
    busy: t.db.prepare(`SELECT
      (SELECT count(*) FROM actions WHERE status IN ('pending', 'running')) +
      (SELECT count(*) FROM servers WHERE state = 'installing')`).pluck(),
  };

  function mint(userId: string, role: TokenRole) {
    const made = tokens.create(userId, { name: `fuzz-${role}`, scopes: [...TOKEN_ROLES[role]] });
    return { id: made.id, secret: made.token };
  }

  async function newServer(userId: string): Promise<string> {
    const server = t.runtime.lifecycle.create(userId, NEW_SERVER);
    await t.runtime.idle(); // installed
    return server.id;
  }

  async function newAction(serverId: string, userId: string): Promise<string> {
    // Stop on a stopped server succeeds at once and starts nothing (the spec's createServerAction description).
    const action = t.runtime.power.requestAction(serverId, userId, 'stop');
    await waitFor(() => q.action.get(action.id) === 'succeeded', 'the fixture action to finish');
    return action.id;
  }

  function newWebhook(userId: string): string {
    const hook = t.store.webhooks.create(userId, { url: 'https://hooks.example.com/fuzz', event_types: ['server.created'] }, 1000);
    t.store.webhooks.test(userId, hook.id);
    return hook.id;
  }

  function newMember(serverId: string): string {
    return t.store.members.create(serverId, `member-${Math.random().toString(36).slice(2)}@example.com`, ['console'], 1000).id;
  }

  /** A schedule whose one task is a stop (a no-op on the stopped fixture server: the fuzzer never starts a game). */
  function newSchedule(serverId: string): string {
    return t.runtime.schedules.create(serverId, t.store.servers.ownerOf(serverId)!, { name: 'fixture', cron: '0 4 * * *', tasks: [{ type: 'power', action: 'stop' }] }).id;
  }

  async function newRun(serverId: string, scheduleId: string): Promise<string> {
    const run = t.runtime.schedules.runNow(serverId, scheduleId, ['console', 'power', 'settings', 'players', 'backups', 'alerts', 'files']);
    await t.runtime.idle();
    return run.id;
  }

  async function user(email: string, withSink = false): Promise<UserFixture> {
    const userId = users.ensure(email).id;
    const made = Object.fromEntries((Object.keys(TOKEN_ROLES) as TokenRole[]).map((r) => [r, mint(userId, r)]));
    const server = await newServer(userId);
    const schedule = newSchedule(server);
    const u: UserFixture = {
      email, userId, tokens: made as UserFixture['tokens'], server, action: await newAction(server, userId), webhook: newWebhook(userId),
      member: newMember(server), schedule, run: await newRun(server, schedule),
    };
    if (withSink) {
      // Created straight into `deleting` (no install, no runtime slot yet): nothing ever finishes its deletion,
      // because only DELETE on a server not yet deleting, or a service boot, starts that work.
      const sink = servers.create(userId, { ...NEW_SERVER, name: 'sink' });
      t.db.prepare("UPDATE servers SET state = 'deleting' WHERE id = ?").run(sink.id);
      u.sink = sink.id;
    }
    return u;
  }

  /**
   * Waits for background work accepted requests began (installs, actions, deletions) to end: the runtime's own
   * account of what it is doing, then the database's (nothing installing, no open action).
   */
  async function settle(): Promise<void> {
    await t.runtime.idle();
    await waitFor(() => q.busy.get() === 0, 'installs and actions to finish');
  }

  /** Puts every fixture of `u` back: tokens un-revoked (re-minted), its one server and action, no extra servers. */
  async function repair(u: UserFixture): Promise<void> {
    for (const role of Object.keys(TOKEN_ROLES) as TokenRole[]) {
      if (!q.tokenActive.get(u.tokens[role].id)) u.tokens[role] = mint(u.userId, role);
    }
    const keep = new Set([u.server, u.sink]);
    for (const s of q.serversOf.all(u.userId) as { id: string; state: string }[]) {
      if (keep.has(s.id)) continue;
      void t.runtime.lifecycle.remove(s.id); // starts nothing when it is already being deleted
      await waitFor(() => q.server.get(s.id) === undefined, `server ${s.id} to be deleted`);
    }
    const state = q.server.get(u.server);
    if (state === undefined || state === 'deleting') {
      // Deleted (or being deleted) by an accepted DELETE: wait for it to go, then make another.
      await waitFor(() => q.server.get(u.server) === undefined, `server ${u.server} to be deleted`);
      u.server = await newServer(u.userId);
    } else if (state !== 'stopped') {
      throw new Error(`fixture server ${u.server} is ${String(state)}; only stop and kill actions reach it, so it should stay stopped`);
    }
    if (q.action.get(u.action) === undefined) u.action = await newAction(u.server, u.userId);
    if (q.webhook.get(u.webhook) === undefined) u.webhook = newWebhook(u.userId);
    if (q.member.get(u.member) === undefined) u.member = newMember(u.server);
    if (q.schedule.get(u.schedule) === undefined) u.schedule = newSchedule(u.server);
    if (q.run.get(u.run) === undefined) u.run = await newRun(u.server, u.schedule);
    await settle();
  }

  return { user, settle, repair, mint };
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}
