import type { ServersRepo } from '../../store/servers-repo';
import type { SettingsService } from '../../runtime/server-settings';
import type { Handlers } from '../types';
import { ownedServer } from './owned';

/** Settings tag: getServerSettings, updateServerSettings (src/runtime/server-settings.ts does the work). */
export function settingsHandlers(deps: { servers: ServersRepo; settings: SettingsService }): Handlers {
  return {
    getServerSettings: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: deps.settings.read(server.id) };
    },
    updateServerSettings: ({ principal, path, body }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      const sender = { userId: principal.userId, tokenId: principal.tokenId };
      return { status: 200, body: deps.settings.update(server.id, body, sender) };
    },
  };
}
