import type { Operation } from 'openapi-backend';
import { AppError } from '../../src/errors';
import { createAccessCheck, readPermissionRules, type PermissionRule } from '../../src/http/access';
import { ALL_PERMISSIONS } from '../../src/store/server-view';
import type { Standing } from '../../src/store/members-repo';
import type { Principal } from '../../src/store/tokens-repo';
import { specOperations } from '../security/helpers';

// The one access check of operations on a server (src/http/access.ts; docs/architecture.md "Sharing"): what each
// operation needs is data next to it in the spec (`x-permission`), read at start, and a server operation without
// it stops the start, so a new operation cannot be left out.

const { operations } = specOperations();
const asOperations = (ops: unknown[]) => ops as Operation[];

describe('x-permission, read from the spec at start', () => {
  test('every operation on a server has a rule, and no other operation has one', () => {
    const rules = readPermissionRules(asOperations(operations));
    const onServers = operations.filter((op) => op.path.startsWith('/v1/servers/{server_id}')).map((op) => op.operationId);
    expect([...rules.keys()].sort()).toEqual(onServers.sort());
    expect(onServers.length).toBeGreaterThan(40);
  });

  const broken = (edit: (ops: Array<Record<string, unknown>>) => void) => {
    const copy = structuredClone(operations) as unknown as Array<Record<string, unknown>>;
    edit(copy);
    return () => readPermissionRules(asOperations(copy));
  };
  test.each([
    ['a server operation without one', (ops: Array<Record<string, unknown>>) => delete ops.find((o) => o.operationId === 'getServerConsole')!['x-permission'], /getServerConsole .* has no valid x-permission/],
    ['a permission that does not exist', (ops: Array<Record<string, unknown>>) => (ops.find((o) => o.operationId === 'getServerSettings')!['x-permission'] = 'admin'), /getServerSettings .* "admin"/],
    ['a task type mapped to no permission', (ops: Array<Record<string, unknown>>) => (ops.find((o) => o.operationId === 'runServerSchedule')!['x-permission'] = { tasks: { command: 'root' } }), /runServerSchedule/],
    ['a rule on an operation that acts on no server', (ops: Array<Record<string, unknown>>) => (ops.find((o) => o.operationId === 'listTokens')!['x-permission'] = 'owner'), /listTokens .* acts on no server/],
  ])('the start fails on %s', (_name, edit, message) => {
    expect(broken(edit)).toThrow(message);
  });
});

describe('the check', () => {
  const OWNER = 'usr_owner';
  const MEMBER = 'usr_member';
  const accepted: string[] = [];
  const standings: Record<string, Standing> = {
    [OWNER]: { ownerId: OWNER, role: 'owner', permissions: [...ALL_PERMISSIONS] }, // as MembersRepo.standing answers for an owner
    [MEMBER]: { ownerId: OWNER, role: 'member', permissions: ['console'], member: { id: 'mem_1', accepted: false } },
  };
  const check = createAccessCheck({
    members: { standing: (_server, user) => standings[user], accept: (id) => void accepted.push(id) },
    scheduleTasks: (_server, id) => (id === 'sch_power' ? ['power'] : undefined),
  });
  const who = (userId: string) => ({ userId, tokenId: 'tok_x', scopes: [], expiresAt: null, sessionBound: false }) as Principal;
  const path = { server_id: 'srv_1', schedule_id: 'sch_power' };
  const outcome = (rule: PermissionRule, userId: string, body?: unknown) => {
    try {
      const { server } = check.check(rule, who(userId), path, body);
      return server.access.role;
    } catch (err) {
      return `${(err as AppError).code} ${(err as AppError).extensions?.permission ?? ''}`.trim();
    }
  };
  const byType = { field: 'type', values: { restore: 'backups' }, otherwise: 'power' } as const;
  const tasks = { tasks: { command: 'console', power: 'power', backup: 'backups' } } as const;

  test.each<[string, PermissionRule, string, unknown, string]>([
    ['the owner may do anything', 'owner', OWNER, undefined, 'owner'],
    ['a stranger finds no server', 'member', 'usr_stranger', undefined, 'server_not_found'],
    ['any member may read', 'member', MEMBER, undefined, 'member'],
    ['a member with the permission', 'console', MEMBER, undefined, 'member'],
    ['a member without it, named', 'power', MEMBER, undefined, 'missing_permission power'],
    ['the owner\'s alone', 'owner', MEMBER, undefined, 'missing_permission owner'],
    ['by the body: otherwise', byType, MEMBER, { type: 'stop' }, 'missing_permission power'],
    ['by the body: the value\'s', byType, MEMBER, { type: 'restore' }, 'missing_permission backups'],
    ['tasks sent that it may send, but a stored one it may not', tasks, MEMBER, { tasks: [{ type: 'command' }] }, 'missing_permission power'],
  ])('%s', (_name, rule, userId, body, want) => {
    expect(outcome(rule, userId, body)).toBe(want);
  });

  test('a member\'s first success is their acceptance (Member.status `active`); a refusal is not', () => {
    accepted.length = 0;
    expect(() => check.check('power', who(MEMBER), path, undefined)).toThrow(AppError);
    const ok = check.check('console', who(MEMBER), path, undefined);
    expect(accepted).toEqual([]);
    ok.accepted?.();
    expect(accepted).toEqual(['mem_1']);
    expect(check.check('member', who(OWNER), path, undefined).accepted).toBeUndefined();
  });
});
