import { randomInt } from 'node:crypto';
import { AppError } from '../../errors';
import type { components } from '../../../generated/v1';
import type { Plan } from '../../catalog/plans';
import type { ServersRepo } from '../../store/servers-repo';
import type { SettingsChange, SettingsRepo } from '../../store/settings-repo';
import type { Doors } from '../server/doors';
import { checkSettings, consoleCommand, effectiveSettings, type SettingValues } from '../software/settings';
import type { SettingDefinition } from '../software/setting-definitions';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { CommandSender } from '../server/types';

/** A server's settings as the API shows them (the spec's ServerSettings). */
export type ServerSettings = components['schemas']['ServerSettings'];

export interface ServerSettingsDeps {
  repo: SettingsRepo;
  servers: Pick<ServersRepo, 'find'>;
  catalog: SoftwareCatalog;
  plans: readonly Plan[];
  /** The servers' doors: a change reaches a running game through its console. */
  doors: Pick<Doors, 'of'>;
}

export interface SettingsService {
  /** The values and which of them wait for a restart; server_not_found for an id with no row. */
  read(serverId: string): ServerSettings;
  /**
   * Validates a change with the software's schema for the server's plan (validation_failed with pointers under
   * /body, changing nothing), stores it, and while the game runs applies through its console each setting that
   * needs no restart. invalid_state while the server is being deleted.
   */
  update(serverId: string, patch: SettingValues, sender: CommandSender): ServerSettings;
  /** The settings given at create, checked (creation-only ones allowed; pointers under /body/settings); nulls dropped. */
  checkNew(software: string, planId: string, values: SettingValues): SettingValues;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The console commands that bring a running game from `launched` to `values`, for settings that need no restart. */
function liveCommands(settings: SettingDefinition[], launched: SettingValues, values: SettingValues) {
  return settings.flatMap((s) => {
    const command = same(launched[s.name], values[s.name]) ? null : consoleCommand(s, values[s.name]);
    return command ? [{ name: s.name, value: values[s.name], command }] : [];
  });
}

/**
 * What changed from `before` to `after` (effective values), as settings.changed says it: a secret setting (its schema
 * `writeOnly`, such as a password) by name only, since an event reaches webhooks and every recipient
 * (openapi/v1.yaml SettingsChangedEvent). Null when no value changed.
 */
function changeOf(settings: SettingDefinition[], before: SettingValues, after: SettingValues): SettingsChange | null {
  const changed = settings.filter((s) => !same(before[s.name], after[s.name]));
  if (changed.length === 0) return null;
  const shown = changed.filter((s) => s.schema.writeOnly !== true && after[s.name] !== undefined);
  return { changed: changed.map((s) => s.name), values: Object.fromEntries(shown.map((s) => [s.name, after[s.name]])) as SettingsChange['values'] };
}

/**
 * The one owner of a server's settings (docs/architecture.md "Settings"): the owner's choices, what the running
 * game has, and how a change reaches it: console commands live, settings.json and arguments at the next launch
 * (launch-files.ts).
 */
export function createServerSettings(deps: ServerSettingsDeps): SettingsService {
  function context(serverId: string) {
    const server = deps.servers.find(serverId);
    if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
    const plan = deps.plans.find((p) => p.id === server.plan);
    if (!plan) throw new AppError('unknown_plan', `Plan "${server.plan}" is not configured on this host.`);
    return { def: deps.catalog.get(server.software), plan };
  }

  function read(serverId: string): ServerSettings {
    const { def, plan } = context(serverId);
    const stored = deps.repo.get(serverId);
    const values = effectiveSettings(def, plan, stored.chosen);
    // Only a game that lives can wait for a restart; a stopped one gets every value at its next start.
    const launched = deps.doors.of(serverId).hasProcess ? stored.launched : null;
    const pending = launched ? def.userSettings.filter((s) => !same(launched[s.name], values[s.name])).map((s) => s.name) : [];
    return { values: values as ServerSettings['values'], restart_pending: pending };
  }

  function update(serverId: string, patch: SettingValues, sender: CommandSender): ServerSettings {
    const slot = deps.doors.of(serverId);
    if (slot.state === 'deleting') throw new AppError('invalid_state', 'The server is being deleted.');
    const { def, plan } = context(serverId);
    checkSettings(def, plan, patch, '/body', false);
    const stored = deps.repo.get(serverId);
    // A null takes the setting back to its default: it leaves the chosen values.
    const chosen = Object.fromEntries(Object.entries({ ...stored.chosen, ...patch }).filter(([, value]) => value !== null));
    // Commands are built before anything is written: a value that cannot be one console line changes nothing.
    const after = effectiveSettings(def, plan, chosen);
    const live = slot.state === 'running' && stored.launched ? liveCommands(def.userSettings, stored.launched, after) : null;
    deps.repo.choose(serverId, chosen, changeOf(def.userSettings, effectiveSettings(def, plan, stored.chosen), after));
    if (live && stored.launched) {
      const game = slot.running('settings are applied live only while it runs');
      for (const { command } of live) {
        slot.console.push('input', command, sender);
        game.send(command);
      }
      deps.repo.recordLaunched(serverId, { ...stored.launched, ...Object.fromEntries(live.map((c) => [c.name, c.value])) });
    }
    return read(serverId);
  }

  return {
    read,
    update,
    checkNew(software, planId, values) {
      const plan = deps.plans.find((p) => p.id === planId);
      if (!plan) throw new AppError('unknown_plan', `There is no plan "${planId}".`);
      const definition = deps.catalog.get(software);
      checkSettings(definition, plan, values, '/body/settings', true);
      const chosen = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
      // A seed left out is picked here rather than by the game, so the settings show the world's own (issue 38 §2).
      for (const s of definition.userSettings) {
        if (s.randomAtCreate && chosen[s.name] === undefined) chosen[s.name] = randomInt(s.schema.minimum as number, (s.schema.maximum as number) + 1);
      }
      return chosen;
    },
  };
}
