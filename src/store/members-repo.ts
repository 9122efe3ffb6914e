import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { AppError, quotaExceeded } from '../errors';
import type { components } from '../../generated/v1';
import { ALL_PERMISSIONS, type MemberPermission } from './server-view';
import type { EventsRepo } from './events-repo';

export type Member = components['schemas']['Member'];

interface MemberRow {
  id: string;
  server_id: string;
  email: string;
  permissions: string;
  accepted_at: string | null;
  created_at: string;
  updated_at: string;
  /** The account with that email, once the member has used the server (joined by the reads). */
  user_id: string | null;
}

function toMember(row: MemberRow): Member {
  return {
    id: row.id,
    server_id: row.server_id,
    email: row.email,
    status: row.accepted_at === null ? 'invited' : 'active',
    user_id: row.accepted_at === null ? null : row.user_id,
    permissions: JSON.parse(row.permissions) as MemberPermission[],
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * A caller's standing on a server: its owner (who holds every permission), or a member with permissions
 * (Server.access), or neither.
 */
export interface Standing {
  ownerId: string;
  role: 'owner' | 'member';
  permissions: MemberPermission[];
  /** The membership, for a member; `accepted` false until their first use of the server (Member.status). */
  member?: { id: string; accepted: boolean };
}

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  const columns = `m.*, (SELECT u.id FROM users u WHERE u.email = m.email) AS user_id`;
  return {
    insert: db.prepare(`INSERT INTO members (id, server_id, email, permissions, created_at, updated_at)
      VALUES (@id, @server_id, @email, @permissions, @created_at, @created_at)`),
    get: db.prepare<unknown[], MemberRow>(`SELECT ${columns} FROM members m WHERE m.server_id = ? AND m.id = ?`),
    page: db.prepare<unknown[], MemberRow>(`SELECT ${columns} FROM members m WHERE m.server_id = ? AND m.id > ? ORDER BY m.id LIMIT ?`),
    byEmail: db.prepare('SELECT 1 FROM members WHERE server_id = ? AND email = ?').pluck(),
    count: db.prepare<unknown[], number>('SELECT COUNT(*) FROM members WHERE server_id = ?').pluck(),
    ownerEmail: db.prepare<unknown[], string>('SELECT u.email FROM servers s JOIN users u ON u.id = s.user_id WHERE s.id = ?').pluck(),
    update: db.prepare('UPDATE members SET permissions = ?, updated_at = ? WHERE server_id = ? AND id = ?'),
    remove: db.prepare('DELETE FROM members WHERE server_id = ? AND id = ?'),
    owner: db.prepare<unknown[], string>('SELECT user_id FROM servers WHERE id = ?').pluck(),
    membership: db.prepare<unknown[], { id: string; permissions: string; accepted_at: string | null }>(`SELECT m.id, m.permissions, m.accepted_at FROM members m JOIN users u ON u.email = m.email
      WHERE m.server_id = ? AND u.id = ?`),
    accept: db.prepare('UPDATE members SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL'),
    // The stream sweep: which of these (user, server, permission) still hold (the owner, or a member with it).
    holds: db.prepare<unknown[], string>(`SELECT value FROM json_each(@pairs) p WHERE EXISTS (SELECT 1 FROM servers s
      WHERE s.id = json_extract(p.value, '$[1]') AND s.state != 'deleting' AND (s.user_id = json_extract(p.value, '$[0]')
        OR EXISTS (SELECT 1 FROM members m JOIN users u ON u.email = m.email
          WHERE m.server_id = s.id AND u.id = json_extract(p.value, '$[0]')
            AND (json_extract(p.value, '$[2]') = 'member'
              OR EXISTS (SELECT 1 FROM json_each(m.permissions) WHERE value = json_extract(p.value, '$[2]'))))))`).pluck(),
  };
}

/** The server's member by id; member_not_found when it has none by that id. */
function memberOf(st: Statements, serverId: string, id: string): Member {
  const row = st.get.get(serverId, id);
  if (!row) throw new AppError('member_not_found', `There is no member ${id} of this server.`);
  return toMember(row);
}

/** A server's members as its owner manages them: sharing it, reading them, changing permissions, ending a membership. */
function memberEdits(db: Db, st: Statements, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  return {
    /**
     * Shares the server with `email`: validation_failed for its owner's own email, member_exists for one already
     * a member, quota_exceeded past `perServer` members. One transaction, so a burst cannot pass the cap.
     */
    create(serverId: string, email: string, permissions: MemberPermission[], perServer: number): Member {
      return db.transaction(() => {
        const owner = required(st.ownerEmail.get(serverId));
        if (owner.toLowerCase() === email.toLowerCase()) {
          const detail = 'is the server owner\'s own email';
          throw new AppError('validation_failed', `The server cannot be shared with its owner: the email ${detail}.`, [{ pointer: '/body/email', detail }]);
        }
        if (st.byEmail.get(serverId, email)) throw new AppError('member_exists', `${email} is already a member of this server; change their permissions instead.`);
        const used = required(st.count.get(serverId));
        if (used >= perServer) throw quotaExceeded('members', perServer, used, `The server has ${used} members, the most allowed; remove one first.`);
        const now = clock.now();
        const id = newId('mem', now);
        st.insert.run({ id, server_id: serverId, email, permissions: JSON.stringify(permissions), created_at: iso(now) });
        const member = toMember(required(st.get.get(serverId, id)));
        events.raise('member.added', { member }, { serverId });
        return member;
      }).immediate();
    },

    get: (serverId: string, id: string): Member => memberOf(st, serverId, id),

    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: Member[]; has_more: boolean } {
      const rows = st.page.all(serverId, opts.startingAfter ?? '', opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toMember), has_more: rows.length > opts.limit };
    },

    /**
     * Replaces the member's permissions (member_not_found unless it is one of the server's), with its
     * `member.updated` event in the same transaction; the same permissions again change nothing and raise none.
     */
    update(serverId: string, id: string, permissions: MemberPermission[]): Member {
      return db.transaction(() => {
        const before = memberOf(st, serverId, id); // member_not_found
        const same = before.permissions.length === permissions.length && permissions.every((p) => before.permissions.includes(p));
        if (same) return before;
        st.update.run(JSON.stringify(permissions), iso(clock.now()), serverId, id);
        const member = memberOf(st, serverId, id);
        events.raise('member.updated', { member }, { serverId });
        return member;
      })();
    },

    /** Ends the membership (member_not_found unless it is one of the server's), with its `member.removed` event. */
    remove(serverId: string, id: string): void {
      db.transaction(() => {
        const member = memberOf(st, serverId, id); // member_not_found
        st.remove.run(serverId, id);
        events.raise('member.removed', { member }, { serverId });
      })();
    },
  };
}

/** The access check's side (src/http/access.ts): a caller's standing, a member's first use, what open streams still hold. */
function standings(st: Statements, clock: Clock) {
  return {
    /** The caller's standing on the server, or undefined when it is neither theirs nor shared with them (or gone). */
    standing(serverId: string, userId: string): Standing | undefined {
      const ownerId = st.owner.get(serverId);
      if (ownerId === undefined) return undefined;
      if (ownerId === userId) return { ownerId, role: 'owner', permissions: [...ALL_PERMISSIONS] };
      const m = st.membership.get(serverId, userId);
      if (!m) return undefined;
      return { ownerId, role: 'member', permissions: JSON.parse(m.permissions) as MemberPermission[], member: { id: m.id, accepted: m.accepted_at !== null } };
    },

    /** The member's first use of the server (Member.status becomes `active`). */
    accept(memberId: string): void {
      st.accept.run(iso(clock.now()), memberId);
    },

    /**
     * Which of these [user id, server id, permission or `member`] still hold, as JSON keys: the server exists, is
     * not being deleted, and is the user's or shared with them with that permission (one query, for the sweep of
     * open streams, src/http/sse.ts).
     */
    holding(pairs: Array<[string, string, string]>): Set<string> {
      return new Set(st.holds.all({ pairs: JSON.stringify(pairs) }));
    },
  };
}

/**
 * The `members` table (migration 027; docs/architecture.md "Sharing"): who a server is shared with, by email, and
 * what each may do. A membership applies to the account with its email whenever one exists, so nothing here ever
 * says whether an account exists: a member is `invited` until their first use of the server, and only then shows
 * its account id. Every read takes the server's id, which the access check has found the caller may manage.
 */
export function createMembersRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const st = statements(db);
  return { ...memberEdits(db, st, clock, events), ...standings(st, clock) };
}

export type MembersRepo = ReturnType<typeof createMembersRepo>;
