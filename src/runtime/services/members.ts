// A server's members as the API changes them (openapi/v1.yaml, the Members tag): MembersRepo's rows, and what a
// change means for the schedules the member wrote (docs/architecture.md "Schedules"): a removal, or permissions
// taken, disables at once each schedule its author can no longer run, with a `schedule.disabled` event.
import type { MemberPermission } from '../../store/server-view';
import type { MembersRepo } from '../../store/members-repo';
import type { SchedulesService } from './schedules';

export interface MembersDeps {
  repo: MembersRepo;
  schedules: Pick<SchedulesService, 'membersChanged'>;
}

export function createMembers(deps: MembersDeps) {
  const { repo, schedules } = deps;
  return {
    page: (serverId: string, opts: { limit: number; startingAfter?: string }) => repo.page(serverId, opts),
    get: repo.get,
    create: (serverId: string, email: string, permissions: MemberPermission[], perServer: number) => repo.create(serverId, email, permissions, perServer),
    /** New permissions (member_not_found); the member's schedules that need one taken are disabled. */
    update(serverId: string, id: string, permissions: MemberPermission[]) {
      const member = repo.update(serverId, id, permissions);
      schedules.membersChanged(serverId);
      return member;
    },
    /** Removes the member (member_not_found); their schedules on the server are disabled. */
    remove(serverId: string, id: string): void {
      repo.remove(serverId, id);
      schedules.membersChanged(serverId);
    },
  };
}

export type MembersService = ReturnType<typeof createMembers>;
