import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { components } from '../../generated/v1';
import { actorFor, serviceActor, type Actor } from '../actors';
import type { MemberPermission, ServerAccess } from './server-view';
import type { DeliveryWrites } from './delivery-writes';
import { runShown, scheduleShown, type Schedule, type ScheduleRun } from './schedules-repo';

/** An event as the API shows it (the spec's Event schema, one variant per type). */
// The events this service sends: the spec's Event but OtherEvent, the branch for types a later version adds (x-open-enum).
export type Event = Extract<components['schemas']['Event'], { data: unknown }>;
export type EventType = components['schemas']['EventType'];
type Player = components['schemas']['Player'];
type PlayerLeftReason = components['schemas']['PlayerLeftReason'];
type DataOf<T extends EventType> = Extract<Event, { type: T }> extends { data: infer D } ? D : never;

/**
 * Who of a server's people gets an event of each type (openapi/v1.yaml, the Events tag): its owner always; a member
 * when `member` (everyone) or when they hold the permission that shows what it is about. `owner` types are an
 * account's own (tokens, webhooks) and never about a server. A Record over EventType: a new type must say.
 */
export const EVENT_AUDIENCE: Record<EventType, MemberPermission | 'member' | 'owner'> = {
  'server.created': 'member',
  'server.updated': 'member',
  'server.deleted': 'member',
  'server.state_changed': 'member',
  'server.crashed': 'console', // it carries the console's last lines
  'action.succeeded': 'member',
  'action.failed': 'member',
  'player.joined': 'players',
  'player.left': 'players',
  'token.created': 'owner',
  'token.revoked': 'owner',
  'webhook.disabled': 'owner',
  'webhook.test': 'owner',
  'backup.created': 'backups',
  'backup.ready': 'backups',
  'backup.failed': 'backups',
  'backup.deleted': 'backups',
  'quota.disk_warning': 'member',
  'quota.disk_exceeded': 'member',
  'alert.triggered': 'alerts',
  'alert.resolved': 'alerts',
  'schedule.ran': 'member',
  'schedule.failed': 'member',
  'schedule.disabled': 'member',
  'member.added': 'owner', // sharing is the owner's to manage (x-permission: owner)
  'member.updated': 'owner',
  'member.removed': 'owner',
  'server.recovered': 'member', // as server.updated: the server's new address and files
  'player_list.changed': 'players',
  'settings.changed': 'settings',
};

/**
 * Whom an event is about: a server (its owner and the members who may see it), or one account (its tokens and
 * webhooks, a kept backup whose server is gone; `onlyWebhook`: webhook.test goes to that webhook alone).
 */
export type EventScope = { serverId: string } | { userId: string; serverId?: string | null; onlyWebhook?: string };

/** An event with its place in the log: `seq` orders every event of the service (never shown to clients). */
export interface StoredEvent {
  seq: number;
  userId: string;
  event: Event;
}

interface EventRow {
  seq: number;
  id: string;
  user_id: string;
  server_id: string | null;
  type: EventType;
  data: string;
  created_at: string;
  /** Migration 028; NULL for events recorded before it. */
  actor: string | null;
}

export interface EventFilter {
  type?: EventType;
  serverId?: string;
}

const UNKNOWN_ACTOR = JSON.stringify(serviceActor('unknown'));

/**
 * The event as the API shows it, from its row: the one place this is done, for GET /v1/events, the stream and the
 * webhook outbox alike (outbox-repo.ts; openapi/v1.yaml `webhooks`: the body is the event exactly as GET /v1/events
 * shows it).
 */
export function eventOf(row: Pick<EventRow, 'id' | 'type' | 'server_id' | 'created_at' | 'actor' | 'data'>): Event {
  const actor = JSON.parse(row.actor ?? UNKNOWN_ACTOR) as Actor;
  return { id: row.id, type: row.type, server_id: row.server_id, created_at: row.created_at, actor, data: JSON.parse(row.data) as unknown } as Event;
}

function toStored(row: EventRow): StoredEvent {
  return { seq: row.seq, userId: row.user_id, event: eventOf(row) };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const filters = `(@type IS NULL OR type = @type) AND (@server_id IS NULL OR server_id = @server_id)`;
  return {
    insert: db.prepare(`INSERT INTO events (id, user_id, server_id, type, data, created_at, actor)
      VALUES (@id, @user_id, @server_id, @type, @data, @created_at, @actor)`),
    ownerOf: db.prepare<unknown[], string>('SELECT user_id FROM servers WHERE id = ?').pluck(),
    // The server's members with an account (the membership applies once one exists: migration 027).
    members: db.prepare<unknown[], { user_id: string; permissions: string }>(`SELECT u.id AS user_id, m.permissions FROM members m JOIN users u ON u.email = m.email
      WHERE m.server_id = ? ORDER BY m.id`),
    // A cursor the user has no event for (purged, or not theirs) stands by the time in its id (src/ids.ts): after
    // the user's last event with an id sorting before it. Only the user's own events are ever compared.
    seqOf: db.prepare<unknown[], number>(`SELECT COALESCE((SELECT seq FROM events WHERE id = @id AND user_id = @user_id),
      (SELECT MAX(seq) FROM events WHERE user_id = @user_id AND id <= @id), 0)`).pluck(),
    page: db.prepare<unknown[], EventRow>(`SELECT * FROM events WHERE user_id = @user_id AND seq > @after AND ${filters} ORDER BY seq LIMIT @limit`),
    pageDesc: db.prepare<unknown[], EventRow>(`SELECT * FROM events WHERE user_id = @user_id AND seq < @before AND ${filters} ORDER BY seq DESC LIMIT @limit`),
    since: db.prepare<unknown[], EventRow>('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
    maxSeq: db.prepare<unknown[], number>('SELECT COALESCE(MAX(seq), 0) FROM events').pluck(),
    bySeq: db.prepare<unknown[], EventRow>('SELECT * FROM events WHERE seq = ?'),
    // Per player of the server, its last player.* event (the owner's events, through events_by_user): who the events
    // say is online. Read at boot and when a node returns, never per request.
    online: db.prepare<unknown[], string>(`SELECT data FROM (SELECT type, data, ROW_NUMBER() OVER (
        PARTITION BY json_extract(data, '$.player.uuid') ORDER BY seq DESC) AS n
      FROM events WHERE user_id = (SELECT user_id FROM servers WHERE id = @id) AND server_id = @id
        AND type IN ('player.joined', 'player.left')) WHERE n = 1 AND type = 'player.joined' ORDER BY data`).pluck(),
    // Events are appended in time order, so the expired ones are those before the first one that is not: the
    // subquery walks `seq` from the oldest and stops there (no index on created_at; migration 023). An event
    // stamped out of order (the clock stepped back) is kept longer, never deleted early.
    purge: db.prepare(`DELETE FROM events WHERE seq < COALESCE(
      (SELECT seq FROM events WHERE created_at >= ? ORDER BY seq LIMIT 1), 9223372036854775807)`),
  };
}

/**
 * Each member's copy of a server's data shows the server with the member's own access (Server.access), and a
 * schedule and its run as the member may read them (a command's text only with `console`: scheduleShown, runShown).
 */
function forMember(data: unknown, access: ServerAccess): unknown {
  const d = data as { server?: object; schedule?: Schedule; run?: ScheduleRun };
  if (d.server) return { ...d, server: { ...d.server, access } };
  if (d.schedule) return { ...d, schedule: scheduleShown(d.schedule, access.permissions), ...(d.run ? { run: runShown(d.run, access.permissions) } : {}) };
  return data;
}

/** What writing events needs besides the statements: createEventsRepo's parameters. */
interface WriteDeps {
  db: Db;
  clock: Clock;
  actor: () => Actor;
  deliveries: Pick<DeliveryWrites, 'owe'>;
}

/** Writing the log: raising an event (one copy per recipient, each with its outbox rows), and purging old ones. */
function eventWrites(st: Statements, { db, clock, actor, deliveries }: WriteDeps) {
  /** One copy of an event for one recipient, with the outbox rows its webhooks are owed (see raise). */
  function append(userId: string, serverId: string | null, type: EventType, data: unknown, by: Actor, onlyWebhook: string | null = null): Event {
    const now = clock.now();
    const shown = actorFor(by, userId);
    const row = {
      id: newId('evt', now), user_id: userId, server_id: serverId, type, data: JSON.stringify(data), created_at: iso(now), actor: JSON.stringify(shown),
    };
    const seq = Number(st.insert.run(row).lastInsertRowid);
    deliveries.owe({
      time: now.toString(36).padStart(9, '0'),
      seq,
      server_key: serverId ?? '',
      created_at: row.created_at,
      user_id: userId,
      type,
      only: onlyWebhook,
    });
    return { id: row.id, type, server_id: serverId, created_at: row.created_at, actor: shown, data } as Event;
  }

  /**
   * Raises an event: one copy for each recipient of `scope`, as the current actor, or `as` for an event only the
   * service raises (an alert, a disk measurement, a failing webhook: whoever's work happened to run it is not who
   * did it). Returns the first copy (the owner's, or the account's), or null when the server's row is gone.
   */
  function raise<T extends EventType>(type: T, data: DataOf<T>, scope: EventScope, as?: Actor): Event | null {
    const by = as ?? actor();
    const write = (): Event | null => {
      if ('userId' in scope) return append(scope.userId, scope.serverId ?? null, type, data, by, scope.onlyWebhook ?? null);
      const owner = st.ownerOf.get(scope.serverId);
      if (owner === undefined) return null;
      const first = append(owner, scope.serverId, type, data, by);
      const audience = EVENT_AUDIENCE[type];
      for (const m of st.members.all(scope.serverId)) {
        const permissions = JSON.parse(m.permissions) as MemberPermission[];
        if (m.user_id === owner || audience === 'owner' || (audience !== 'member' && !permissions.includes(audience))) continue;
        append(m.user_id, scope.serverId, type, forMember(data, { role: 'member', permissions }), by);
      }
      return first;
    };
    // Inside the change's own transaction (the usual case) the inserts join it as they are; a nested
    // db.transaction would add a SAVEPOINT and its RELEASE to every change (BENCHMARKS.md §6).
    return db.inTransaction ? write() : db.transaction(write)();
  }

  return {
    raise,

    /**
     * player.joined and player.left, in one transaction: the runtime learns them from the game's reports, and
     * when the game stops every player still online leaves with the stop's cause (`reason`).
     */
    playersChanged(serverId: string, joined: Player[], left: Player[], reason: PlayerLeftReason = 'left'): void {
      db.transaction(() => {
        for (const player of joined) raise('player.joined', { player }, { serverId });
        for (const player of left) raise('player.left', { player, reason }, { serverId });
      })();
    },

    /** Deletes events older than `retentionMs` (EVENT_RETENTION_DAYS) with their deliveries; returns how many. */
    purge: (retentionMs: number): number => st.purge.run(iso(clock.now() - retentionMs)).changes,
  };
}

/** Reading the log: a user's pages and the stream's replay, the feed's reads of every user's, who is online. */
function eventReads(st: Statements) {
  /** The user's events after `seq`, oldest first, filtered (the stream's replay). */
  function after(userId: string, seq: number, limit: number, filter: EventFilter = {}): StoredEvent[] {
    const params = { user_id: userId, after: seq, limit, type: filter.type ?? null, server_id: filter.serverId ?? null };
    return st.page.all(params).map(toStored);
  }

  /** Where an event id stands among the user's events (a cursor or Last-Event-ID; see the statement). */
  const seqOf = (userId: string, id: string): number => required(st.seqOf.get({ id, user_id: userId }));

  return {
    /**
     * The user's events after `startingAfter`, oldest first (docs/conventions.md "Collections"); with `desc`,
     * newest first, and after `startingAfter` means older than it.
     */
    page(userId: string, opts: { limit: number; startingAfter?: string; desc?: boolean } & EventFilter) {
      const cursor = opts.startingAfter === undefined ? undefined : seqOf(userId, opts.startingAfter);
      const rows = opts.desc
        ? st.pageDesc.all({ user_id: userId, before: cursor ?? Number.MAX_SAFE_INTEGER, limit: opts.limit + 1, type: opts.type ?? null, server_id: opts.serverId ?? null }).map(toStored)
        : after(userId, cursor ?? 0, opts.limit + 1, opts);
      return { data: rows.slice(0, opts.limit).map((r) => r.event), has_more: rows.length > opts.limit };
    },

    after,
    seqOf,

    /**
     * The players the server's events say are online: each one whose last player event is a player.joined. The
     * runtime asks when it takes over a game it did not see report (adopted at boot or after its node returned),
     * and when a game went away unseen (a previous service life's), so no player is joined twice or left a ghost.
     */
    onlinePlayers(serverId: string): Player[] {
      return st.online.all({ id: serverId }).map((data) => (JSON.parse(data) as { player: Player }).player);
    },

    /** Every user's events after `seq` (the feed, src/events/feed.ts); it fans them out per user. */
    since: (seq: number, limit: number): StoredEvent[] => st.since.all(seq, limit).map(toStored),
    maxSeq: (): number => required(st.maxSeq.get()),
    bySeq(seq: number): StoredEvent | undefined {
      const row = st.bySeq.get(seq);
      return row && toStored(row);
    },
  };
}

/**
 * The `events` table (docs/architecture.md "Events and webhooks"), and the one place events are raised: `raise` is
 * called by the repository that makes a change, inside that change's transaction (its statements join it; outside
 * one it opens its own), so an event exists exactly when its change does, across kill -9. It attaches the actor
 * (`actor()`, the work's current one: src/actors.ts), writes one copy per recipient (a server's owner, and each
 * member who may see it: EVENT_AUDIENCE), and the webhook outbox rows each copy owes (delivery-writes.ts, which also
 * keeps the outbox's bounds), in the same transaction, so no delivery is lost either. Every reader takes the user id: one user never sees another's events. Built once per
 * service (createStore) or CLI process, and handed to every repository that raises events.
 */
export function createEventsRepo(db: Db, clock: Clock, actor: () => Actor, deliveries: Pick<DeliveryWrites, 'owe'>) {
  const st = statements(db);
  return { ...eventWrites(st, { db, clock, actor, deliveries }), ...eventReads(st) };
}

export type EventsRepo = ReturnType<typeof createEventsRepo>;
