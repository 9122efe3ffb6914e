// A running game's console with the fake game fixture: what it stores of the game's output, and what it does
// with the commands it is sent. Ports 28500-28519.
import fs from 'node:fs';
import path from 'node:path';
import { hostPerTest, insertServer, sender, waitAction, waitFor, waitState } from './helpers';

const BASE_PORT = 28500;
let nextPort = BASE_PORT;

/** Anything a terminal would act on: C0 controls but tab, DEL, C1 controls. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/; // eslint-disable-line no-control-regex

const t = hostPerTest('console', { stopTimeoutMs: 3_000 });

/** A fake game, installed and started; resolves once it is running. */
async function running(): Promise<string> {
  const id = insertServer(t.host.db, { software: 'fake-game', gameVersion: '1.0', port: nextPort++ });
  await t.runtime.lifecycle.install(id);
  const start = t.runtime.power.requestAction(id, 'usr_test', 'start');
  expect(await waitAction(t.runtime, id, start.id)).toMatchObject({ status: 'succeeded' });
  return id;
}

const consoleLog = (id: string) => fs.readFileSync(path.join(t.host.dataDir, 'servers', id, 'logs', 'console.log'), 'utf8');

test("the game's terminal control sequences are neither stored nor written to logs/console.log", async () => {
  const id = await running();
  t.runtime.consoles.sendCommand(id, 'escapes', sender);
  const line = await waitFor('the printed line', () => t.runtime.consoles.recent(id, 20).find((l) => l.stream === 'stdout' && l.text.endsWith('e')));
  expect(line.text).toBe('abcde');
  for (const l of t.runtime.consoles.recent(id, 100)) expect(l.text).not.toMatch(CONTROL);
  await waitFor('the log file', () => consoleLog(id).includes('abcde'));
  expect(consoleLog(id).replace(/\n/g, '')).not.toMatch(CONTROL);
});

test("the host's folders are masked: the server folder shows as `.`, DATA_DIR as `$DATA_DIR`", async () => {
  const id = await running();
  t.runtime.consoles.sendCommand(id, 'cwd', sender);
  await waitFor('the printed folders', () => t.runtime.consoles.recent(id, 20).find((l) => l.text.startsWith('data: ')));
  const printed = t.runtime.consoles.recent(id, 20).filter((l) => l.stream === 'stdout').map((l) => l.text);
  expect(printed).toEqual(expect.arrayContaining(['cwd: .', 'world: ./world', 'data: $DATA_DIR']));
  for (const l of t.runtime.consoles.recent(id, 100)) expect(l.text).not.toContain(t.host.dir);
  await waitFor('the log file', () => consoleLog(id).includes('data: $DATA_DIR'));
  expect(consoleLog(id)).not.toContain(t.host.dir);
});

// The spec refuses these before any handler runs (test/integration/validation.test.ts); the runtime refuses them
// too, for its other callers. Nothing reaches the game or the console.
test.each([
  ['ESC (an OSC title)', 'say \x1b]0;pwned\x07'],
  ['BEL', 'say \x07'],
  ['tab', 'say\ta'],
  ['a line break', 'say a\nstop'],
  ['DEL', 'say \x7f'],
  ['C1 CSI', 'say \x9b31m'],
  ['line separator', 'say a\u2028stop'],
  ['an unpaired surrogate', 'say \ud800'],
  ['only spaces', '   '],
])('a command with %s is refused', async (_name, command) => {
  const id = await running();
  const before = t.runtime.consoles.recent(id, 100);
  expect(() => t.runtime.consoles.sendCommand(id, command, sender)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  expect(t.runtime.consoles.recent(id, 100)).toEqual(before);
});

test("a command's line records the token that sent it; every other line records none", async () => {
  const id = await running();
  const line = t.runtime.consoles.sendCommand(id, 'hello there', sender);
  expect(line).toMatchObject({ stream: 'input', text: 'hello there', token_id: sender.token_id });
  await waitFor('the echo', () => t.runtime.consoles.recent(id, 20).find((l) => l.text === 'echo: hello there'));
  for (const l of t.runtime.consoles.recent(id, 100)) expect(l.token_id).toBe(l.seq === line.seq ? sender.token_id : null);
  await waitFor('the log file', () => consoleLog(id).includes('echo: hello there'));
  expect(consoleLog(id)).toContain(`[input ${sender.token_id}] hello there\n`);
  expect(consoleLog(id)).toContain('[stdout] echo: hello there\n');
});

// The game exits on its stop command whoever types it; typed in the console it used to be recorded as a crash
// and restarted, until the crash loop cap left the server crashed. It is a stop action by the sender instead.
test.each(['stop', 'STOP', '  stop  ', '/stop', 'stop now'])('%j typed in the console is a stop by that user: stopped, no crash, no restart', async (command) => {
  const id = await running();
  const seen: string[] = [];
  t.runtime.events.on('state', (e) => e.serverId === id && seen.push(e.state));
  const line = t.runtime.consoles.sendCommand(id, command, sender);
  expect(line).toMatchObject({ stream: 'input', text: command, token_id: sender.token_id });
  await waitState(t.runtime, id, 'stopped', 10_000);
  await t.runtime.idle();
  expect(t.runtime.power.crashes(id)).toEqual([]);
  expect(t.host.db.prepare('SELECT desired_state FROM servers WHERE id = ?').get(id)).toEqual({ desired_state: 'stopped' });
  expect(t.runtime.power.listActions(id, { limit: 1 }).data[0]).toMatchObject({ type: 'stop', status: 'succeeded', error: null });
  expect(seen).toEqual(['stopping', 'stopped']);
});

test('a typed stop while another action is in progress is refused and reaches neither the game nor the console', async () => {
  const id = await running();
  const restart = t.runtime.power.requestAction(id, 'usr_test', 'restart');
  const before = t.runtime.consoles.recent(id, 100);
  expect(() => t.runtime.consoles.sendCommand(id, 'stop', sender)).toThrow(expect.objectContaining({ code: 'action_conflict' }));
  expect(t.runtime.consoles.recent(id, 100)).toEqual(before);
  expect(await waitAction(t.runtime, id, restart.id)).toMatchObject({ status: 'succeeded' });
  expect(t.runtime.lifecycle.state(id)).toBe('running');
});
