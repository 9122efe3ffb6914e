import { missingPermission } from '../../errors';
import type { MemberPermission } from '../../store/server-view';

/**
 * What a console command needs besides `console` (docs/architecture.md "Sharing"; openapi/v1.yaml
 * sendServerCommand): a console command that does what an operation needs a permission for needs that
 * permission too, whoever sends it. Stopping the game needs `power` as a stop action does, changing who may
 * join or who is an operator needs `players` as the player lists do, and so on. Otherwise the console would be a
 * side door around every other permission.
 *
 * Data, not code: a software definition's `console_permissions` key names the commands per permission,
 *
 *   "console_permissions": { "players": ["op", "deop", "ban"], "power": ["stop"] }
 *
 * and the commands the definition itself sends for an operation count too, so they cannot be forgotten:
 * `stop_command` needs `power`, `kick_command` and the `player_lists` commands need `players`, a setting's
 * `via.console` needs `settings`. A command is known by its first word, read more generously than any game reads
 * it (leading spaces and slashes aside, any case, a `namespace:` prefix dropped): refusing a line the game would
 * not have run costs nothing, running one that should have been refused gives the permission away.
 */

/** The permissions a console command may need: every member permission but `console` itself. */
export const COMMAND_PERMISSIONS = ['power', 'settings', 'players', 'backups', 'alerts'] as const satisfies readonly MemberPermission[];

/** Per command word (as commandWord gives it), what it needs. */
export type ConsolePermissions = ReadonlyMap<string, readonly MemberPermission[]>;

/**
 * The word a game would take for the command: the line's first word, without leading whitespace or slashes,
 * lowercased, and after the last `:` of it (`minecraft:stop` is `stop`). Empty for a line without one.
 */
export function commandWord(line: string): string {
  const first = line.replace(/^[\s/]+/u, '').split(/\s/u, 1)[0] ?? '';
  const word = first.toLowerCase();
  return word.slice(word.lastIndexOf(':') + 1).replace(/^\/+/, '');
}

/** What the software needs of whoever sends `commandLine` to its console besides `console`; empty for most. */
export function requiredPermissions(software: { consolePermissions: ConsolePermissions }, commandLine: string): MemberPermission[] {
  return [...(software.consolePermissions.get(commandWord(commandLine)) ?? [])];
}

/**
 * Throws `403 missing_permission` naming the first permission `held` lacks and the command, when the line needs one
 * (requiredPermissions). An owner holds every permission.
 */
export function checkCommandPermissions(
  software: { consolePermissions: ConsolePermissions },
  commandLine: string,
  held: readonly MemberPermission[],
): void {
  for (const need of requiredPermissions(software, commandLine)) {
    if (!held.includes(need)) {
      const word = commandWord(commandLine);
      throw missingPermission(need, `The console command "${word}" needs the ${need} permission on this server, which its owner has not given you.`);
    }
  }
}

/**
 * Parses a definition's `console_permissions` and adds what its own commands need (see above). Throws through
 * `fail` naming the field at fault.
 */
export function parseConsolePermissions(
  raw: unknown,
  own: { stopCommand: string; kickCommand: string | null; listCommands: string[]; settingCommands: string[] },
  fail: (msg: string) => never,
): ConsolePermissions {
  const needs = new Map<string, MemberPermission[]>();
  const add = (line: string, permission: MemberPermission) => {
    const word = commandWord(line);
    if (word === '') return;
    const list = needs.get(word) ?? [];
    if (!list.includes(permission)) list.push(permission);
    needs.set(word, list);
  };
  if (raw !== undefined) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('"console_permissions" must be an object');
    for (const [permission, words] of Object.entries(raw)) {
      if (!(COMMAND_PERMISSIONS as readonly string[]).includes(permission)) {
        fail(`"console_permissions.${permission}": permissions are ${COMMAND_PERMISSIONS.join(', ')}`);
      }
      const ok = Array.isArray(words) && words.every((w) => typeof w === 'string' && /^[^\s/:]+$/u.test(w));
      if (!ok) fail(`"console_permissions.${permission}" must be an array of command words (no spaces, slashes or colons)`);
      for (const w of words as string[]) add(w, permission as MemberPermission);
    }
  }
  add(own.stopCommand, 'power');
  if (own.kickCommand) add(own.kickCommand, 'players');
  for (const c of own.listCommands) add(c, 'players');
  for (const c of own.settingCommands) add(c, 'settings');
  return needs;
}
