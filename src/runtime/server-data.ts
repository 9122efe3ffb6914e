import type { Plan } from '../catalog/plans';
import type { Logger } from '../log';
import { createBackups, type BackupsService } from './backups';
import { createKeptBackups, type KeptBackupsService } from './kept-backups';
import type { Store } from '../store';
import type { LaunchSettings } from './game';
import { createPlayerLists, type PlayerListsService } from './player-lists';
import { createServerSettings, type SettingsService } from './server-settings';
import type { ServerSupervisor } from './server-supervisor';
import type { SoftwareCatalog } from './software-catalog';

export interface ServerData {
  settings: SettingsService;
  playerLists: PlayerListsService;
  backups: BackupsService;
  /** The account's backups kept after their server was deleted (listKeptBackups). */
  keptBackups: KeptBackupsService;
  launch: LaunchSettings;
}

/**
 * What a server's owner keeps about its game, beyond its life: its settings, its player lists and its backups, and
 * the files and arguments a launch takes (docs/architecture.md "Settings", "Player lists", "Backups").
 */
export function createServerData(deps: {
  store: Pick<Store, 'servers' | 'settings' | 'playerLists' | 'backups' | 'keptBackups' | 'actions'>;
  catalog: SoftwareCatalog;
  plans: readonly Plan[];
  supervisor: (serverId: string) => ServerSupervisor;
  config: { dataDir: string; keptBackupsPerUser: number };
  log: Logger;
  track: (p: Promise<unknown>) => void;
}): ServerData {
  const { store, catalog, supervisor } = deps;
  const keptBackups = createKeptBackups({
    repo: store.keptBackups, dataDir: deps.config.dataDir, perUser: deps.config.keptBackupsPerUser, inUse: (id) => backups.restoring(id),
  });
  const backups = createBackups({
    repo: store.backups, actions: store.actions, servers: store.servers, catalog, plans: deps.plans, kept: keptBackups, supervisor, dataDir: deps.config.dataDir, log: deps.log, track: deps.track,
  });
  const settings = createServerSettings({ repo: store.settings, servers: store.servers, catalog, plans: deps.plans, supervisor });
  const playerLists = createPlayerLists({ repo: store.playerLists, servers: store.servers, catalog, supervisor });
  return {
    settings,
    playerLists,
    backups,
    keptBackups,
    launch: {
      forLaunch(launch) {
        const own = settings.forLaunch(launch);
        return { files: { ...own.files, ...playerLists.files(launch) }, args: own.args };
      },
    },
  };
}
