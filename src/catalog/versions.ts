import type { components } from '../../generated/v1';
import type { SettingDefinition } from '../runtime/software/setting-definitions';

export type Version = components['schemas']['Version'];
export type VersionDetail = components['schemas']['VersionDetail'];
type PlayerListName = components['schemas']['PlayerListName'];

/**
 * What the HTTP layer needs of the software catalog (src/runtime/software): the versions on offer and the
 * parse of a `<software>-<game_version>` id. Software names may contain dashes (`flying-squid`), so an id is
 * resolved against the known software, never split on the first dash.
 */
export interface VersionCatalog {
  list(): Version[];
  resolve(id: string): Version | undefined;
  /** The version with the settings its software offers (GET /v1/versions/{version_id}); undefined if unknown. */
  detail(id: string): VersionDetail | undefined;
}

/** Adapts the runtime's software catalog (which throws on unknown ids) to the lookup the handlers use. */
export function versionCatalog(source: {
  list(): Version[];
  get(softwareId: string): {
    userSettings: SettingDefinition[];
    playerLists: { lists: Partial<Record<PlayerListName, unknown>> } | null;
    kickCommand: string | null;
    backup: { consistency: 'live' | 'stop' } | null;
  };
}): VersionCatalog {
  const resolve = (id: string) => source.list().find((v) => v.id === id);
  return {
    list: () => source.list(),
    resolve,
    detail(id) {
      const version = resolve(id);
      if (!version) return undefined;
      const software = source.get(version.software);
      const lists = (['whitelist', 'operators', 'bans'] as const).filter((l) => software.playerLists?.lists[l] !== undefined);
      // Said beforehand, so a client can tell its user whether a backup will disconnect players (Backup.consistency).
      const backup = software.backup && { consistency: software.backup.consistency };
      return { ...version, settings: software.userSettings.map(settingView), player_lists: lists, kick: software.kickCommand !== null, backup };
    },
  };
}

function settingView(s: SettingDefinition): VersionDetail['settings'][number] {
  const via = (['file', 'argument', 'console'] as const).filter((k) => s.via[k] !== null);
  // The definition's schema was checked at load (setting-definitions.ts): a `type` of SettingSchema's and a description.
  const schema = s.schema as VersionDetail['settings'][number]['schema'];
  return { name: s.name, schema, restart_required: s.restart, applied_through: via, creation_only: s.creationOnly, plan_limit: s.planLimit };
}
