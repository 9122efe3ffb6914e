import type { PlayerListsRepo } from '../../store/player-lists-repo';
import type { SettingsRepo } from '../../store/settings-repo';
import type { LaunchPlan, LaunchSettings } from './game';
import type { ListName } from '../software/player-list-definitions';
import { effectiveSettings, renderSettingsFile, settingArguments } from '../software/settings';

/**
 * What a launch takes from the server's settings and player lists (docs/architecture.md "Settings", "Player lists"):
 * settings.json and the arguments the settings give, and the definition's lists file, written before every launch
 * (prepareLaunch in game.ts), so a change made while the server was stopped reaches its next start. Reads only the
 * tables, so the servers' doors can take it without the services that change settings and lists through them.
 */
export function createLaunchFiles(deps: { settings: SettingsRepo; playerLists: PlayerListsRepo }): LaunchSettings {
  /** The settings as the game gets them, recorded as launched (server-settings.ts shows what waits for a restart). */
  function settingsFiles(launch: LaunchPlan) {
    const values = effectiveSettings(launch.def, launch.plan, deps.settings.get(launch.server.id).chosen);
    deps.settings.recordLaunched(launch.server.id, values);
    return { files: { 'settings.json': renderSettingsFile(launch.def, values) }, args: settingArguments(launch.def, values) };
  }

  /** The lists file (the definition's `player_lists.file`), or nothing for software without lists. */
  function listsFile(launch: LaunchPlan): Record<string, string> {
    const defs = launch.def.playerLists;
    if (!defs) return {};
    const id = launch.server.id;
    const content = Object.fromEntries(
      (Object.keys(defs.lists) as ListName[]).map((list) => [
        list,
        { ...(defs.lists[list]?.on ? { enabled: deps.playerLists.enabled(id, list) } : {}), names: deps.playerLists.entries(id, list).map((e) => e.name) },
      ]),
    );
    return { [defs.file]: JSON.stringify(content, null, 2) + '\n' };
  }

  return {
    forLaunch(launch) {
      const own = settingsFiles(launch);
      return { files: { ...own.files, ...listsFile(launch) }, args: own.args };
    },
  };
}
