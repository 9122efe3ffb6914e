import type { Plan } from '../catalog/plans';
import type { Store } from '../store';
import type { LaunchSettings } from './game';
import { createPlayerLists, type PlayerListsService } from './player-lists';
import { createServerSettings, type SettingsService } from './server-settings';
import type { ServerSupervisor } from './server-supervisor';
import type { SoftwareCatalog } from './software-catalog';

/**
 * What a server's owner sets about its game, beyond its life: its settings and its player lists, and the files and
 * arguments a launch takes from both (docs/architecture.md "Settings", "Player lists").
 */
export function createServerData(deps: {
  store: Pick<Store, 'servers' | 'settings' | 'playerLists'>;
  catalog: SoftwareCatalog;
  plans: readonly Plan[];
  supervisor: (serverId: string) => ServerSupervisor;
}): { settings: SettingsService; playerLists: PlayerListsService; launch: LaunchSettings } {
  const { store, catalog, supervisor } = deps;
  const settings = createServerSettings({ repo: store.settings, servers: store.servers, catalog, plans: deps.plans, supervisor });
  const playerLists = createPlayerLists({ repo: store.playerLists, servers: store.servers, catalog, supervisor });
  return {
    settings,
    playerLists,
    launch: {
      forLaunch(launch) {
        const own = settings.forLaunch(launch);
        return { files: { ...own.files, ...playerLists.files(launch) }, args: own.args };
      },
    },
  };
}
