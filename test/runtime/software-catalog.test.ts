// Software definitions are data: parsing, validation messages, version strings with dashes, the built-in list.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/paths';
import {
  createCatalog, isStopCommand, loadSoftwareCatalog, parseSoftwareDefinition, renderCommand,
} from '../../src/runtime/software/software-catalog';
import { fixtureSoftwareDir } from './helpers';

// flying-squid ships no typings; testedVersions is its own list of the versions it supports (src/lib/version.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { testedVersions } = require('flying-squid') as { testedVersions: string[] };

const valid = {
  id: 'paper',
  description: 'Paper {game_version}',
  game_versions: ['1.21.4'],
  command: ['java', '-Xmx{memory_mb}M', '-jar', '{dir}/paper.jar', '--port', '{port}', 'nogui'],
  ipc: false,
  ready: { console: 'Done \\(\\d+\\.\\d+s\\)!' },
  stop_command: 'stop',
  players: 'minecraft-ping',
};

// Each message names the file and the JSON pointer of the field at fault (issue 17).
const invalid: [string, { given: Record<string, unknown>; want: RegExp }][] = [
  ['id with capitals', { given: { ...valid, id: 'Paper' }, want: /^x\.json at \/id: "id" must be lowercase/ }],
  ['no versions', { given: { ...valid, game_versions: [] }, want: /^x\.json at \/game_versions: "game_versions" must be a non-empty array/ }],
  ['unknown placeholder', { given: { ...valid, command: ['java', '{ram}'] }, want: /^x\.json at \/command: .*unknown placeholder \{ram\}/ }],
  ['{launcher} without a launcher', { given: { ...valid, command: ['{launcher}'] }, want: /at \/command: .*no "launcher" file/ }],
  ['bad players probe', { given: { ...valid, players: 'rcon' }, want: /at \/players: "players" must be/ }],
  ['ipc probe without ipc', { given: { ...valid, players: 'ipc' }, want: /at \/ipc: "ipc" must be true for IPC probes/ }],
  ['ready missing', { given: { ...valid, ready: undefined }, want: /at \/ready: "ready" must be/ }],
  ['ready regex broken', { given: { ...valid, ready: { console: '(' } }, want: /at \/ready\/console: .*not a valid regex/ }],
  ['no stop command', { given: { ...valid, stop_command: '' }, want: /at \/stop_command: "stop_command" must be a non-empty string/ }],
  ['a kick command without the name', { given: { ...valid, kick_command: 'kick' }, want: /at \/kick_command: "kick_command" must be one line of console text with "\{name\}"/ }],
  ['a kick command over two lines', { given: { ...valid, kick_command: 'kick {name}\nsay bye' }, want: /at \/kick_command: / }],
  ['negative timeout', { given: { ...valid, start_timeout_ms: -1 }, want: /at \/start_timeout_ms: "start_timeout_ms" must be a positive number/ }],
  ['launch_hold not a boolean', { given: { ...valid, launch_hold: 'yes' }, want: /at \/launch_hold: "launch_hold" must be true or false/ }],
  ['bad transport', { given: { ...valid, transport: 'sctp' }, want: /at \/transport: "transport" must be "tcp" or "udp"/ }],
  ['relative image file', { given: { ...valid, image_files: ['bin/server'] }, want: /at \/image_files: .*absolute paths/ }],
  ['a setting of an unknown type', { given: withSetting({ schema: { type: 'object', description: 'd' } }), want: /"user_settings.motd": "schema.type" must be/ }],
  ['a setting without a description', { given: withSetting({ schema: { type: 'string' } }), want: /"schema.description" is required/ }],
  ['a title that is not text', { given: withSetting({ schema: { type: 'string', title: 7, description: 'd' } }), want: /"schema.title" must be text/ }],
  ['a default the schema refuses', { given: withSetting({ schema: { type: 'string', maxLength: 2, default: 'long', description: 'd' } }), want: /"schema.default" does not match/ }],
  ['a broken schema', { given: withSetting({ schema: { type: 'string', maxLength: 'two', description: 'd' } }), want: /not a valid JSON Schema/ }],
  ['a setting that reaches the game nowhere', { given: withSetting({ via: {} }), want: /"via" needs "file", "argument" or "console"/ }],
  ['an argument the command lacks', { given: withSetting({ via: { argument: 'seed' } }), want: /must be a placeholder of "command"/ }],
  ['no restart without a console command', { given: withSetting({ restart: false }), want: /without a restart needs "via.console"/ }],
  ['a file key that is no JSON Pointer', { given: withSetting({ via: { file: 'motd' } }), want: /"via.file" must be a JSON Pointer/ }],
  ['a random pick of a text', { given: withSetting({ creation_only: true, random_at_create: true }), want: /"random_at_create" needs "creation_only" and an integer schema/ }],
  ['a random pick without bounds', { given: withSetting({ schema: { type: 'integer', minimum: 1, description: 'd' }, creation_only: true, random_at_create: true }), want: /"random_at_create" needs/ }],
  ['a random pick after create', { given: withSetting({ schema: { type: 'integer', minimum: 1, maximum: 9, description: 'd' }, random_at_create: true }), want: /"random_at_create" needs "creation_only"/ }],
];

/** The valid definition with one setting, `motd`, changed by `patch`. */
function withSetting(patch: Record<string, unknown>) {
  const motd = { schema: { type: 'string', description: 'd' }, restart: true, via: { file: '/motd' }, ...patch };
  return { ...valid, user_settings: { motd } };
}

for (const [name, { given, want }] of invalid) {
  test(`rejects ${name}`, () => expect(() => parseSoftwareDefinition(given, 'x.json')).toThrow(want));
}

test('an operator definition (a Paper jar) parses and renders without code changes', () => {
  const def = parseSoftwareDefinition(valid, '/srv/software/paper.json');
  expect(def).toMatchObject({ id: 'paper', ipc: false, players: 'minecraft-ping', startTimeoutMs: 120_000, launcherPath: null });
  const argv = renderCommand(def, {
    node: '/usr/bin/node', server_id: 'srv_1', game_version: '1.21.4', memory_mb: '2048', heap_mb: '1536',
    port: '25570', host: '0.0.0.0', max_players: '20', dir: '/data/servers/srv_1',
  });
  expect(argv).toEqual(['java', '-Xmx2048M', '-jar', '/data/servers/srv_1/paper.jar', '--port', '25570', 'nogui']);
  expect('ready' in def && 'console' in def.ready && def.ready.console.test('Done (3.21s)! For help')).toBe(true);
});

const resolveCases: [string, { given: string; want: [string, string] | null }][] = [
  ['plain', { given: 'fake-game-1.0', want: ['fake-game', '1.0'] }],
  ['dashes in the game version', { given: 'fake-game-2.0-beta', want: ['fake-game', '2.0-beta'] }],
  ['dashes in the software id', { given: 'fake-game-mute-1.0', want: ['fake-game-mute', '1.0'] }],
  ['flying-squid', { given: 'flying-squid-1.21.4', want: ['flying-squid', '1.21.4'] }],
  ['unknown game version', { given: 'flying-squid-9.9', want: null }],
  ['unknown software', { given: 'vanilla-1.21.4', want: null }],
  ['prefix only', { given: 'fake-game', want: null }],
];

const catalog = loadSoftwareCatalog({ operatorDir: fixtureSoftwareDir });
for (const [name, { given, want }] of resolveCases) {
  test(`resolve: ${name}`, () => {
    if (want === null) {
      expect(() => catalog.resolve(given)).toThrow(expect.objectContaining({ code: 'unknown_version' }));
    } else {
      const { software, gameVersion } = catalog.resolve(given);
      expect([software.id, gameVersion]).toEqual(want);
    }
  });
}

test('built-in flying-squid offers exactly the versions flying-squid declares tested', () => {
  const builtIn = loadSoftwareCatalog();
  const offered = builtIn.list().filter((v) => v.software === 'flying-squid');
  expect(offered.map((v) => v.game_version)).toEqual(testedVersions);
  expect(offered[0]).toEqual({
    id: 'flying-squid-1.8.8', software: 'flying-squid', game: 'Minecraft Java Edition', game_version: '1.8.8',
    description: 'flying-squid 1.8.8: a Minecraft Java Edition server written in Node.js (offline mode)',
  });
  expect(builtIn.get('flying-squid').launcherPath).toBe(path.join(packageRoot(), 'src', 'runtime', 'software', 'flying-squid-launcher.cjs'));
  expect([builtIn.get('flying-squid').launchHold, builtIn.get('luanti').launchHold]).toEqual([true, false]); // only its launcher holds
});

test('every built-in setting has a title for forms (the dashboard labels fields with it)', () => {
  const builtIn = loadSoftwareCatalog();
  for (const software of ['flying-squid', 'luanti']) {
    const untitled = builtIn.get(software).userSettings.filter((s) => typeof s.schema.title !== 'string' || s.schema.title === '');
    expect({ software, untitled: untitled.map((s) => s.name) }).toEqual({ software, untitled: [] });
  }
});

test('an operator file with a built-in id replaces the built-in one', () => {
  const a = parseSoftwareDefinition({ ...valid, id: 'x', game_versions: ['1'] }, 'a.json');
  const b = parseSoftwareDefinition({ ...valid, id: 'x', game_versions: ['2'] }, 'b.json');
  expect(createCatalog([b]).list().map((v) => v.id)).toEqual(['x-2']);
  expect(createCatalog([a]).get('x').gameVersions).toEqual(['1']);
});

test('packageRoot is the folder holding package.json', () => {
  expect(packageRoot()).toBe(path.resolve(__dirname, '..', '..'));
});

// A stop typed in a console is taken as a stop action (runtime.sendCommand). The match is generous, because a
// game that exits on a command the service did not recognise is recorded as a crash and restarted.
describe('isStopCommand', () => {
  const def = (stop_command: string) => parseSoftwareDefinition({ ...valid, stop_command }, 'x.json');
  test.each([
    ['the stop command', 'stop', 'stop', true],
    ['in capitals', 'stop', 'STOP', true],
    ['with spaces around it', 'stop', '  stop  ', true],
    ['with a leading slash', 'stop', '/stop', true],
    ['with arguments (flying-squid reads the first word)', 'stop', 'stop now please', true],
    ['a multi-word stop command, spaced differently', 'server  shutdown', 'Server shutdown', true],
    ['another command', 'stop', 'say stop', false],
    ['a longer word', 'stop', 'stopsound', false],
    ['only the first word of a multi-word stop command', 'server shutdown', 'server', false],
  ])('%s', (_name, stopCommand, typed, want) => {
    expect(isStopCommand(def(stopCommand), typed)).toBe(want);
  });
});

test('a file that is not a valid definition is left out, named with its field, and the others still load', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-software-'));
  try {
    fs.writeFileSync(path.join(dir, 'good.json'), JSON.stringify({ ...valid, id: 'good' }));
    fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ ...valid, id: 'bad', players: 'rcon' }));
    fs.writeFileSync(path.join(dir, 'broken.json'), '{ "id": ');
    const told: string[] = [];
    const catalog = loadSoftwareCatalog({ operatorDir: dir, onInvalid: (m) => told.push(m) });
    expect(catalog.list().map((v) => v.software)).toEqual(expect.arrayContaining(['flying-squid', 'luanti', 'good']));
    expect(catalog.list().some((v) => v.software === 'bad')).toBe(false);
    expect(told.sort()).toEqual([
      expect.stringMatching(new RegExp(`^${path.join(dir, 'bad.json')} at /players: "players" must be`)),
      expect.stringMatching(new RegExp(`^${path.join(dir, 'broken.json')}: not a JSON file`)),
    ]);
    expect(() => loadSoftwareCatalog({ operatorDir: dir })).toThrow(/bad\.json|broken\.json/); // without onInvalid: throws
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
