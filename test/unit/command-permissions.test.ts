// What a console command needs besides `console` (src/runtime/software/command-permissions.ts; issue 39 §2), read from the
// built-in software definitions' data: each game's power and player-list commands, in every form its console
// would take them (and a few it would not: refusing more costs nothing).
import { checkCommandPermissions, commandWord, requiredPermissions } from '../../src/runtime/software/command-permissions';
import { loadSoftwareCatalog, parseSoftwareDefinition } from '../../src/runtime/software/software-catalog';
import { AppError } from '../../src/errors';

const catalog = loadSoftwareCatalog();
const squid = catalog.get('flying-squid');
const luanti = catalog.get('luanti');

test.each([
  ['stop', 'stop'],
  ['  /STOP now', 'stop'],
  ['//Stop', 'stop'],
  ['minecraft:stop', 'stop'],
  ['/minecraft:op mallory', 'op'],
  ['\u00a0op mallory', 'op'],
  ['say hello', 'say'],
  ['', ''],
])('commandWord(%j) is %j', (line, word) => expect(commandWord(line)).toBe(word));

test.each([
  // flying-squid (node_modules/flying-squid/src/lib/plugins/moderation.js, commands.js; our launcher's own)
  ['stop', ['power']],
  ['Stop please', ['power']],
  ['minecraft:stop', ['power']],
  ['op mallory', ['players']],
  ['/deop mallory', ['players']],
  ['ban mallory griefing', ['players']],
  ['ban-ip 127.0.0.1', ['players']],
  ['pardon mallory', ['players']],
  ['pardon-ip 127.0.0.1', ['players']],
  ['banlist', ['players']],
  ['kick mallory', ['players']],
  ['players operators add mallory', ['players']],
  ['PLAYERS whitelist off', ['players']],
  ['difficulty 3', ['settings']],
  ['diff 3', ['settings']],
  ['pvp off', ['settings']],
  ['world-saving off 999999', ['backups']],
  ['say stop', []],
  ['time set day', []],
  ['stopwatch', []],
])('flying-squid: %j needs %j', (line, needs) => expect(requiredPermissions(squid, line)).toEqual(needs));

test.each([
  // Luanti 5.6.1 builtin chat commands (builtin/game/chat.lua) and our mod's /gsh_players
  ['/shutdown', ['power']],
  ['/shutdown 60 bye', ['power']],
  ['shutdown', ['power']],
  ['/ban mallory', ['players']],
  ['/unban mallory', ['players']],
  ['/kick mallory', ['players']],
  ['/grant mallory server', ['players']],
  ['/grantme all', ['players']],
  ['/revoke alice interact', ['players']],
  ['/setpassword mallory x', ['players']],
  ['/clearpassword alice', ['players']],
  ['/auth_reload', ['players']],
  ['/remove_player alice', ['players']],
  ['/gsh_players whitelist off', ['players']],
  ['/set -n motd hi', ['settings']],
  ['/time 12000', []],
  ['hello everyone', []],
])('luanti: %j needs %j', (line, needs) => expect(requiredPermissions(luanti, line)).toEqual(needs));

test('a member lacking the permission is refused with missing_permission naming it and the command', () => {
  expect(() => checkCommandPermissions(squid, 'say hi', ['console'])).not.toThrow();
  expect(() => checkCommandPermissions(squid, 'stop', ['console', 'power'])).not.toThrow();
  let err: unknown;
  try {
    checkCommandPermissions(squid, '/OP mallory', ['console', 'power']);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ code: 'missing_permission', extensions: { permission: 'players' } });
  expect((err as AppError).detail).toMatch(/"op" needs the players permission/);
});

test("a definition's own stop, kick, list and setting commands need their permissions without being listed", () => {
  const def = parseSoftwareDefinition(
    {
      id: 'bare', description: 'x', game_versions: ['1'], command: ['x'], ipc: false, ready: { console: 'Done' }, players: 'none',
      stop_command: 'halt', kick_command: 'boot {name}',
      user_settings: { motd: { schema: { type: 'string', description: 'm', default: 'x' }, restart: false, via: { console: 'setmotd {value}' } } },
      player_lists: { file: 'p.json', lists: { bans: { add: 'bans add {name}', remove: 'unbans {name}' } } },
    },
    'bare.json',
  );
  expect(requiredPermissions(def, 'HALT')).toEqual(['power']);
  expect(requiredPermissions(def, 'boot x')).toEqual(['players']);
  expect(requiredPermissions(def, 'unbans x')).toEqual(['players']);
  expect(requiredPermissions(def, 'setmotd x')).toEqual(['settings']);
});

test('console_permissions is checked at load', () => {
  const base = { id: 'bad', description: 'x', game_versions: ['1'], command: ['x'], ipc: false, ready: { console: 'Done' }, players: 'none', stop_command: 'stop' };
  expect(() => parseSoftwareDefinition({ ...base, console_permissions: { owner: ['x'] } }, 'bad.json')).toThrow(/console_permissions.owner/);
  expect(() => parseSoftwareDefinition({ ...base, console_permissions: { power: ['two words'] } }, 'bad.json')).toThrow(/console_permissions.power/);
  expect(() => parseSoftwareDefinition({ ...base, console_permissions: ['stop'] }, 'bad.json')).toThrow(/console_permissions/);
});
