import type { Operation } from 'openapi-backend';
import { AppError, missingPermission } from '../errors';
import type { MembersRepo } from '../store/members-repo';
import { ALL_PERMISSIONS, type MemberPermission, type ServerAccess } from '../store/server-view';
import type { Principal } from '../store/tokens-repo';

/** What an operation needs: a permission, any member (`member`), or the owner alone (`owner`). */
export type Need = MemberPermission | 'member' | 'owner';

/**
 * An operation's `x-permission` (openapi/v1.yaml; docs/conventions.md "Sharing"), the data that says what a member
 * needs for it. One of:
 * - a Need;
 * - `{ field, values, otherwise }`: by a body field's value (createServerAction: `restore` needs `backups`);
 * - `{ tasks }`: every task of the schedule, as sent and as stored, needs the permission of its type.
 */
export type PermissionRule = Need | { field: string; values: Record<string, Need>; otherwise: Need } | { tasks: Record<string, MemberPermission> };

/** The server a call acts on, as the access check found it (Call.server). */
export interface ServerCaller {
  id: string;
  /** Whose server it is: quotas, kept backups and the owner's actions count against them. */
  ownerId: string;
  /** Server.access, the caller's. */
  access: ServerAccess;
}

const NEEDS: readonly string[] = ['member', 'owner', ...ALL_PERMISSIONS];
const isNeed = (v: unknown): v is Need => typeof v === 'string' && NEEDS.includes(v);

/** Whether a path names a server: its operations act on one, and each must say what it needs. */
export const actsOnServer = (op: Pick<Operation, 'path'>): boolean => op.path.startsWith('/v1/servers/{server_id}');

/**
 * Every operation's rule, read from the spec at start. Throws (the service does not start) when an operation on a
 * server has none or an unreadable one, or another operation has one: so a new operation cannot be left out.
 */
export function readPermissionRules(operations: Operation[]): Map<string, PermissionRule> {
  const rules = new Map<string, PermissionRule>();
  for (const op of operations) {
    const raw = (op as unknown as Record<string, unknown>)['x-permission'];
    const name = `${op.operationId} (${op.method.toUpperCase()} ${op.path})`;
    if (!actsOnServer(op)) {
      if (raw !== undefined) throw new Error(`${name} acts on no server, yet has an x-permission`);
      continue;
    }
    if (!isRule(raw)) throw new Error(`${name} acts on a server but has no valid x-permission: ${JSON.stringify(raw)}`);
    if (!op.operationId) throw new Error(`${name} acts on a server but has no operationId`);
    rules.set(op.operationId, raw);
  }
  return rules;
}

function isRule(raw: unknown): raw is PermissionRule {
  if (isNeed(raw)) return true;
  if (!raw || typeof raw !== 'object') return false;
  const r = raw as Record<string, unknown>;
  if ('tasks' in r) return Object.values(r.tasks as object).every((v) => ALL_PERMISSIONS.includes(v as MemberPermission));
  return typeof r.field === 'string' && isNeed(r.otherwise) && Object.values(r.values ?? {}).every(isNeed);
}

export interface AccessDeps {
  members: Pick<MembersRepo, 'standing' | 'accept'>;
  /** The task types of a stored schedule of this server, or undefined when it has none by that id. */
  scheduleTasks(serverId: string, scheduleId: string): string[] | undefined;
}

/**
 * The one access check of every operation on a server (docs/architecture.md "Sharing"), run by the dispatcher
 * after validation: the caller's standing (owner, member or neither, members-repo.ts `standing`), then what the
 * operation's rule needs of it. Neither owner nor member: `server_not_found`, exactly as a server that does not
 * exist (docs/conventions.md "Authentication"); a member without what it needs: `403 missing_permission`.
 */
export function createAccessCheck(deps: AccessDeps) {
  /** What a rule needs for this request: one Need, or several (a schedule's tasks). */
  function needs(rule: PermissionRule, serverId: string, path: Record<string, unknown>, body: unknown): Need[] {
    if (isNeed(rule)) return [rule];
    if ('field' in rule) {
      const value = (body as Record<string, unknown> | undefined)?.[rule.field];
      return [typeof value === 'string' && value in rule.values ? rule.values[value] : rule.otherwise];
    }
    const sent = ((body as { tasks?: Array<{ type: string }> } | undefined)?.tasks ?? []).map((t) => t.type);
    const stored = typeof path.schedule_id === 'string' ? (deps.scheduleTasks(serverId, path.schedule_id) ?? []) : [];
    return [...new Set([...sent, ...stored])].map((type) => rule.tasks[type]).filter(Boolean);
  }

  return {
    /**
     * The server of the call, checked; throws server_not_found or missing_permission. `accepted` is to be called
     * once the call succeeded: a member's first success makes their membership `active` (Member.status), and a
     * refused request changes nothing.
     */
    check(rule: PermissionRule, principal: Principal, path: Record<string, unknown>, body: unknown): { server: ServerCaller; accepted?: () => void } {
      const id = path.server_id as string;
      const standing = deps.members.standing(id, principal.userId);
      if (!standing) throw new AppError('server_not_found', `There is no server ${id}.`);
      if (standing.role === 'owner') return { server: { id, ownerId: standing.ownerId, access: { role: 'owner', permissions: standing.permissions } } };
      for (const need of needs(rule, id, path, body)) {
        if (need === 'owner') throw missingPermission('owner', 'Only the server\'s owner may do this.');
        if (need !== 'member' && !standing.permissions.includes(need)) {
          throw missingPermission(need, `This needs the ${need} permission on this server, which its owner has not given you.`);
        }
      }
      const member = standing.member;
      if (!member) throw new Error(`the standing of a member of ${id} has no membership`);
      return {
        server: { id, ownerId: standing.ownerId, access: { role: 'member', permissions: standing.permissions } },
        accepted: member.accepted ? undefined : () => deps.members.accept(member.id),
      };
    },
  };
}

export type AccessCheck = ReturnType<typeof createAccessCheck>;
