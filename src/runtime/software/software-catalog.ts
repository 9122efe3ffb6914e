import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../paths';
import { AppError } from '../../errors';
import type { Version } from '../../catalog/versions';
import { parseBackupDefinition, type BackupDefinition } from './backup-definitions';
import { parseConsolePermissions, type ConsolePermissions } from './command-permissions';
import { parseSignal, type Signal } from './signals';
import { parsePlayerLists, type PlayerListDefinitions } from './player-list-definitions';
import { parseSettingDefinitions, type SettingDefinition } from './setting-definitions';

/**
 * Software definitions are data, like Pterodactyl's eggs: one JSON file per software, built-in ones in
 * src/runtime/software/ and an operator's in config.softwareDir. An operator adds a game (a Paper jar, say) by
 * dropping a file there; no code changes. An operator file with the id of a built-in one replaces it.
 *
 * File format (all keys required unless marked optional):
 *   id               "flying-squid"; lowercase letters, digits and dashes
 *   description      text; "{game_version}" in it is filled in per version
 *   game_versions    ["1.20.5", …] the versions offered
 *   command          argv template, e.g. ["{node}", "{launcher}", "--port", "{port}"]; placeholders below
 *   launcher         (optional) file beside the definition that {launcher} points at
 *   ipc              true for Node launchers that report over the IPC channel
 *   ready            { "ipc": "ready" } (message type) or { "console": "Done \\(.*\\)!" } (regex on a line)
 *   stop_command     console text that stops the game gracefully, e.g. "stop"
 *   kick_command     (optional) console text that disconnects a player: "{name}" and "{reason}" are filled in
 *                    (kickServerPlayer); without it the software cannot kick
 *   players          "ipc" | "minecraft-ping" | "none": how to learn who is online
 *   start_timeout_ms (optional, default 120000) how long `starting` may last before the start fails
 *   launch_hold      (optional, default false) true when its launcher, started with GSH_HOLD=1 in its environment,
 *                    loads its code and reads nothing of its folder until "gsh go" arrives on stdin: a move then
 *                    starts its container on the new node while the last pass still copies (docker-environment.ts
 *                    prestart)
 *   settings         (optional) object written as settings.json into the server folder at install and launch
 *   user_settings    (optional) the settings a server's owner may change: setting-definitions.ts
 *   player_lists     (optional) whitelist, operators, bans it supports: player-list-definitions.ts
 *   backup           (optional) what a backup archives and how the world is kept consistent: backup-definitions.ts
 *   console_permissions (optional) { "power": ["stop"], "players": ["op", "ban"], … }: the console commands, by
 *                    first word, that need a permission besides `console`; its own stop, kick, list and setting
 *                    commands are added to them (command-permissions.ts)
 *   game             (optional, default the id) the game its players play, which names their client:
 *                    "Minecraft Java Edition", "Luanti" (Version.game in openapi/v1.yaml)
 *   transport        (optional, default "tcp") "tcp" or "udp": what the game listens on, which the port
 *                    check, the container's published port and Address.transport follow (Luanti: udp)
 *   image_files      (optional) absolute paths of files and folders the game needs in a container besides Node
 *                    (a native server binary, its data); the game image holds them, and each executable's libraries
 *   image_modules    (optional) npm packages its launcher requires (["flying-squid"]): the game image holds each
 *                    with everything it depends on, from this service's node_modules (docker/image.ts)
 *   image_exclude    (optional) paths under node_modules the image leaves out of those packages, data the game
 *                    never reads, as tar patterns (`*`, `[…]`): "minecraft-data/minecraft-data/data/bedrock/[0-9]*",
 *                    another edition's data for each of its versions
 */
export const placeholders = [
  'node', 'launcher', 'server_id', 'game_version', 'memory_mb', 'heap_mb', 'port', 'host', 'max_players', 'dir',
] as const;
export type Placeholder = (typeof placeholders)[number];

export type ReadySignal = Signal;
export type PlayersProbe = 'ipc' | 'minecraft-ping' | 'none';

export interface SoftwareDefinition {
  id: string;
  description: string;
  gameVersions: string[];
  command: string[];
  /** Absolute path of the launcher file, when the definition names one. */
  launcherPath: string | null;
  ipc: boolean;
  ready: ReadySignal;
  stopCommand: string;
  /** The kick's console text with {name} and {reason}, or null when the software cannot kick. */
  kickCommand: string | null;
  players: PlayersProbe;
  startTimeoutMs: number;
  /** Whether its launcher holds until told to go (`launch_hold`): a move may start it ahead. */
  launchHold: boolean;
  settings: Record<string, unknown> | null;
  /** What a server's owner may change (setting-definitions.ts), in the definition's order. */
  userSettings: SettingDefinition[];
  /** The player lists it supports (player-list-definitions.ts), or null for none. */
  playerLists: PlayerListDefinitions | null;
  /** How its world is backed up (backup-definitions.ts), or null if it cannot be. */
  backup: BackupDefinition | null;
  /** What each console command (by its first word) needs besides `console` (command-permissions.ts). */
  consolePermissions: ConsolePermissions;
  game: string;
  transport: 'tcp' | 'udp';
  imageFiles: string[];
  imageModules: string[];
  imageExclude: string[];
  /** The file it was read from, for messages. */
  source: string;
}


export interface SoftwareCatalog {
  list(): Version[];
  /**
   * Parses `<software>-<game_version>`. Software ids may contain dashes, so the string is matched against the
   * known ids (longest first) rather than split. Throws AppError('unknown_version') when nothing matches.
   */
  resolve(version: string): { software: SoftwareDefinition; gameVersion: string };
  /** The definition with this id, or throws AppError('unknown_version'). */
  get(softwareId: string): SoftwareDefinition;
  /** Every definition's `image_files` that exist on this host, for the game image (docker/image.ts). */
  imageFiles(): string[];
  /** Every definition's `image_modules` and `image_exclude`, for the game image (docker/image.ts). */
  imageModules(): { modules: string[]; exclude: string[] };
}

export interface CatalogOptions {
  /** Folder of the built-in definitions; defaults to src/runtime/software under the package root. */
  builtinDir?: string;
  /** The operator's folder (config.softwareDir); a missing folder is fine. */
  operatorDir?: string | null;
  /**
   * Told about each file that is not a valid definition (its path, the JSON pointer of the field at fault, and
   * why), which is then left out: the other software still runs. Without it, an invalid file throws.
   */
  onInvalid?: (message: string) => void;
}

export function loadSoftwareCatalog(options: CatalogOptions = {}): SoftwareCatalog {
  const builtinDir = options.builtinDir ?? path.join(packageRoot(), 'src', 'runtime', 'software');
  const byId = new Map<string, SoftwareDefinition>();
  for (const dir of [builtinDir, options.operatorDir ?? null]) {
    if (!dir || !fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
      const file = path.join(dir, f);
      try {
        let raw: unknown;
        try {
          raw = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch (err) {
          throw new Error(`${file}: not a JSON file: ${(err as Error).message}`, { cause: err });
        }
        const def = parseSoftwareDefinition(raw, file);
        byId.set(def.id, def);
      } catch (err) {
        if (!options.onInvalid) throw err;
        options.onInvalid((err as Error).message);
      }
    }
  }
  return createCatalog([...byId.values()]);
}

export function createCatalog(definitions: SoftwareDefinition[]): SoftwareCatalog {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const idsLongestFirst = [...byId.keys()].sort((a, b) => b.length - a.length);
  const get = (softwareId: string): SoftwareDefinition => {
    const def = byId.get(softwareId);
    if (!def) throw new AppError('unknown_version', `No software "${softwareId}" is installed on this host.`);
    return def;
  };
  return {
    list: () =>
      definitions.flatMap((d) =>
        d.gameVersions.map((v) => ({
          id: `${d.id}-${v}`,
          software: d.id,
          game: d.game,
          game_version: v,
          description: d.description.replace(/\{game_version\}/g, v),
        })),
      ),
    resolve(version) {
      for (const id of idsLongestFirst) {
        if (!version.startsWith(id + '-')) continue;
        const gameVersion = version.slice(id.length + 1);
        const software = byId.get(id);
        if (software?.gameVersions.includes(gameVersion)) return { software, gameVersion };
      }
      throw new AppError('unknown_version', `"${version}" is not an offered version; GET /v1/versions lists them.`);
    },
    get,
    imageFiles: () => [...new Set(definitions.flatMap((d) => d.imageFiles))].filter((p) => fs.existsSync(p)).sort(),
    imageModules: () => ({
      modules: [...new Set(definitions.flatMap((d) => d.imageModules))].sort(),
      exclude: [...new Set(definitions.flatMap((d) => d.imageExclude))].sort(),
    }),
  };
}

/** Validates one definition file's content. Throws an Error naming the file and the field at fault. */
export function parseSoftwareDefinition(raw: unknown, source: string): SoftwareDefinition {
  // Every message names its field first ("key" or "key.sub"): said as the JSON pointer (RFC 6901) of it.
  const fail = (msg: string): never => {
    const field = /^"([\w.]+)"/.exec(msg);
    throw new Error(field ? `${source} at /${field[1].replace(/\./g, '/')}: ${msg}` : `${source}: ${msg}`);
  };
  if (!isObject(raw)) return fail('a software definition must be a JSON object');
  const str = (key: string): string => {
    const v = raw[key];
    return typeof v === 'string' && v !== '' ? v : fail(`"${key}" must be a non-empty string`);
  };
  const strings = (key: string): string[] => {
    const v = raw[key];
    const ok = Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s !== '');
    return ok ? (v as string[]) : fail(`"${key}" must be a non-empty array of non-empty strings`);
  };
  const id = str('id');
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id)) fail('"id" must be lowercase letters, digits and single dashes');
  const command = strings('command');
  const launcher = raw.launcher === undefined ? null : str('launcher');
  checkPlaceholders(command, launcher, fail);
  const ipc = raw.ipc;
  if (typeof ipc !== 'boolean') fail('"ipc" must be true or false');
  const players = raw.players;
  if (players !== 'ipc' && players !== 'minecraft-ping' && players !== 'none') {
    fail('"players" must be "ipc", "minecraft-ping" or "none"');
  }
  if ((players === 'ipc' || isObject(raw.ready) && 'ipc' in raw.ready) && !ipc) fail('"ipc" must be true for IPC probes');
  const timeout = raw.start_timeout_ms ?? 120_000;
  if (typeof timeout !== 'number' || !(timeout > 0)) fail('"start_timeout_ms" must be a positive number');
  if (raw.launch_hold !== undefined && typeof raw.launch_hold !== 'boolean') fail('"launch_hold" must be true or false');
  if (raw.settings !== undefined && !isObject(raw.settings)) fail('"settings" must be an object');
  const imageFiles = raw.image_files ?? [];
  const absolute = Array.isArray(imageFiles) && imageFiles.every((p) => typeof p === 'string' && path.isAbsolute(p));
  if (!absolute) fail('"image_files" must be an array of absolute paths');
  const names = (key: string, pattern: RegExp): string[] => {
    const v = raw[key] ?? [];
    return Array.isArray(v) && v.every((p) => typeof p === 'string' && pattern.test(p) && !p.split('/').includes('..'))
      ? (v as string[])
      : fail(`"${key}" must be an array of ${key === 'image_modules' ? 'npm package names' : 'relative paths under node_modules'}`);
  };
  const imageModules = names('image_modules', /^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/);
  const imageExclude = names('image_exclude', /^[^/][\w@./*[\]-]*$/);
  const transport = raw.transport ?? 'tcp';
  if (transport !== 'tcp' && transport !== 'udp') fail('"transport" must be "tcp" or "udp"');
  if (raw.game !== undefined && !(typeof raw.game === 'string' && raw.game !== '' && raw.game.length <= 60)) {
    fail('"game" must be a non-empty string of at most 60 characters');
  }
  const stopCommand = str('stop_command');
  const kickCommand = parseKickCommand(raw.kick_command, fail);
  const userSettings = parseSettingDefinitions(raw.user_settings, [...command.join(' ').matchAll(/\{(\w+)\}/g)].map((m) => m[1]), fail);
  const playerLists = parsePlayerLists(raw.player_lists, fail);
  return {
    id,
    description: str('description'),
    gameVersions: strings('game_versions'),
    command,
    launcherPath: launcher ? path.resolve(path.dirname(source), launcher) : null,
    ipc: ipc as boolean,
    ready: parseSignal(raw.ready, 'ready', fail),
    stopCommand,
    kickCommand,
    players: players as PlayersProbe,
    startTimeoutMs: timeout as number,
    launchHold: raw.launch_hold === true,
    settings: (raw.settings as Record<string, unknown> | undefined) ?? null,
    userSettings,
    playerLists,
    backup: parseBackupDefinition(raw.backup, fail),
    consolePermissions: parseConsolePermissions(raw.console_permissions, ownCommands(stopCommand, kickCommand, playerLists, userSettings), fail),
    game: (raw.game as string | undefined) ?? id,
    transport: transport as 'tcp' | 'udp',
    imageFiles: imageFiles as string[],
    imageModules,
    imageExclude,
    source,
  };
}

/** Every `{placeholder}` of the command is one the launch fills in, `{launcher}` only with a launcher file. */
function checkPlaceholders(command: string[], launcher: string | null, fail: (msg: string) => never): void {
  for (const m of command.join(' ').matchAll(/\{(\w+)\}/g)) {
    if (!(placeholders as readonly string[]).includes(m[1])) {
      fail(`"command" has an unknown placeholder {${m[1]}}; known: ${placeholders.map((p) => `{${p}}`).join(' ')}`);
    }
    if (m[1] === 'launcher' && !launcher) fail('"command" uses {launcher} but no "launcher" file is named');
  }
}

/** The commands the definition itself sends for an operation: each needs that operation's permission (command-permissions.ts). */
function ownCommands(stopCommand: string, kickCommand: string | null, playerLists: SoftwareDefinition['playerLists'], userSettings: SoftwareDefinition['userSettings']) {
  const listCommands = Object.values(playerLists?.lists ?? {}).flatMap((c) => [c.add, c.remove, c.on, c.off].filter((x): x is string => x !== null));
  const settingCommands = userSettings.map((s) => s.via.console).filter((c): c is string => c !== null);
  return { stopCommand, kickCommand, listCommands, settingCommands };
}

function parseKickCommand(raw: unknown, fail: (msg: string) => never): string | null {
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !raw.includes('{name}') || /[\r\n]/.test(raw)) {
    return fail('"kick_command" must be one line of console text with "{name}" in it (and "{reason}" where the game takes one)');
  }
  return raw;
}

/** Fills the command template. Every placeholder was checked at load, so all are present here. */
export function renderCommand(def: SoftwareDefinition, values: Omit<Record<Placeholder, string>, 'launcher'>): string[] {
  const all: Record<string, string> = { ...values, launcher: def.launcherPath ?? '' };
  return def.command.map((part) => part.replace(/\{(\w+)\}/g, (_, name: string) => all[name]));
}

/**
 * True when a console command would make the game stop: the definition's stop command, compared the generous
 * way games read their console (case, spaces and a leading `/` aside; flying-squid also stops on `stop` followed
 * by anything). Generous on purpose: a command taken for a stop is a clean stop action, while a stop the service
 * missed makes the game exit unasked, which is recorded as a crash and restarted.
 */
export function isStopCommand(def: SoftwareDefinition, command: string): boolean {
  const normal = (text: string) => text.trim().replace(/^\//, '').replace(/\s+/g, ' ').toLowerCase();
  const stop = normal(def.stopCommand);
  const typed = normal(command);
  return typed === stop || typed.startsWith(`${stop} `);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
