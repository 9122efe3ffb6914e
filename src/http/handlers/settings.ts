import { userActor } from '../../actors';
import type { SettingsService } from '../../runtime/services/server-settings';
import type { Handlers } from '../types';

/** Settings tag: getServerSettings, updateServerSettings (src/runtime/services/server-settings.ts does the work). */
export function settingsHandlers(deps: { settings: SettingsService }): Handlers {
  return {
    getServerSettings: ({ server }) => ({ status: 200, body: deps.settings.read(server.id) }),
    updateServerSettings: ({ principal, server, body }) => ({
      status: 200,
      body: deps.settings.update(server.id, body, userActor(principal.userId, principal.tokenId)),
    }),
  };
}
