import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { MembersService } from '../../runtime/services/members';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { page, withCursor } from './paging';

/**
 * Members tag: listServerMembers, createServerMember, getServerMember, updateServerMember, deleteServerMember, the
 * owner's alone (their x-permission). MembersService (src/runtime/services/members.ts) does the work; a removal ends the member's streams of the server
 * at the stream registry's next sweep (src/http/sse.ts), within a second.
 */
export function memberHandlers(deps: { members: MembersService; idempotency: IdempotencyRepo; perServer: number }): Handlers {
  const { members } = deps;
  return {
    listServerMembers: ({ server, query }) => ({ status: 200, body: withCursor(members.page(server.id, page(query))) }),

    createServerMember: (call) => {
      const { server, body } = call;
      return idempotent(deps.idempotency, call, { operation: 'createServerMember', path: server.id, body }, () => {
        const member = members.create(server.id, body.email, body.permissions, deps.perServer);
        return { status: 201 as const, body: member, headers: { Location: `/v1/servers/${server.id}/members/${member.id}` } };
      });
    },

    getServerMember: ({ server, path }) => ({ status: 200, body: members.get(server.id, path.member_id) }),

    updateServerMember: ({ server, path, body }) => ({ status: 200, body: members.update(server.id, path.member_id, body.permissions) }),

    deleteServerMember: ({ server, path }) => {
      members.remove(server.id, path.member_id);
      return { status: 204, body: undefined };
    },
  };
}
