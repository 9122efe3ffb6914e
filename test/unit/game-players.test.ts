// Who joined and who left, as a Game learns it from its player reports (src/runtime/server/game.ts; issue 27 §5): from
// nothing, or from the players the events say are online when a running game is taken over (adopted at boot or
// after its node returned), so nobody is joined twice; and everyone left at once, with the cause, when it stops.
import { Game, type Player, type PlayerLeftReason } from '../../src/runtime/server/game';
import type { GameProcess } from '../../src/runtime/host/environment';
import type { ConsoleBuffer } from '../../src/runtime/server/console-buffer';
import type { SoftwareDefinition } from '../../src/runtime/software/software-catalog';
import type { Plan } from '../../src/catalog/plans';

const player = (name: string): Player => ({ name, uuid: `00000000-0000-3000-8000-${name.padStart(12, '0')}` });
const [ann, bob, cat] = [player('ann'), player('bob'), player('cat')];

/** A Game over a process that only delivers the messages the test sends; returns what it reported. */
function game(online: Player[], clock = { now: 0 }) {
  let deliver: (msg: unknown) => void = () => undefined;
  const proc = { onLine: () => undefined, onMessage: (fn: (m: unknown) => void) => void (deliver = fn), exited: new Promise(() => undefined) } as unknown as GameProcess;
  const def = { ready: { ipc: 'ready' }, players: 'ipc', kickCommand: 'kick {name} {reason}' } as unknown as SoftwareDefinition;
  const sent: string[] = [];
  Object.assign(proc, { sendCommand: (text: string) => void sent.push(text) });
  const plan = { player_slots: 5 } as Plan;
  const changes: Array<{ joined: string[]; left: string[]; reason: PlayerLeftReason }> = [];
  const g = new Game(proc, def, plan, { host: '127.0.0.1', port: 1, transport: 'tcp' }, { push: () => undefined } as unknown as ConsoleBuffer,
    () => false, (joined, left, reason) => void changes.push({ joined: joined.map((p) => p.name), left: left.map((p) => p.name), reason }), online,
    () => clock.now);
  const report = (players: Player[]) => deliver({ type: 'players', online: players.length, max: 5, players });
  return { g, changes, report, sent };
}

const cases: [string, { online: Player[]; reports: Player[][]; stop?: PlayerLeftReason; want: Array<{ joined: string[]; left: string[]; reason: PlayerLeftReason }> }][] = [
  ['a fresh game: each report against the last', { online: [], reports: [[ann], [ann, bob], [bob]], want: [
    { joined: ['ann'], left: [], reason: 'left' }, { joined: ['bob'], left: [], reason: 'left' }, { joined: [], left: ['ann'], reason: 'left' },
  ] }],
  ['taken over with ann and bob online: the same report joins nobody', { online: [ann, bob], reports: [[ann, bob]], want: [] }],
  ['taken over: who left meanwhile leaves, who came joins', { online: [ann, bob], reports: [[bob, cat]], want: [
    { joined: ['cat'], left: ['ann'], reason: 'left' },
  ] }],
  ['stopped: everyone reported leaves with the cause, once', { online: [], reports: [[ann, bob]], stop: 'restart', want: [
    { joined: ['ann', 'bob'], left: [], reason: 'left' }, { joined: [], left: ['ann', 'bob'], reason: 'restart' },
  ] }],
  ['taken over and stopped before any report: the players it took over leave', { online: [cat], reports: [], stop: 'crash', want: [
    { joined: [], left: ['cat'], reason: 'crash' },
  ] }],
];

test.each(cases)('%s', (_name, { online, reports, stop, want }) => {
  const { g, changes, report } = game(online);
  for (const players of reports) report(players);
  if (stop) {
    g.leaveAll(stop);
    g.leaveAll(stop); // a second call finds nobody
  }
  expect(changes).toEqual(want);
});

test('a game taken over lists its players before its first report', async () => {
  const { g } = game([ann]);
  expect(await g.players(0)).toEqual({ online: 1, max: 5, players: [ann] });
});

test('a kick sends the definition\'s command as typed; leaving within 30 s of it is a kick, later or unkicked a plain leave', () => {
  const clock = { now: 1_000 };
  const { g, changes, report, sent } = game([], clock);
  report([ann, bob, cat]);
  expect(g.kick(ann, "Costs $& and $' too")).toBe("kick ann Costs $& and $' too");
  g.kick(bob, 'bye');
  expect(sent).toEqual(["kick ann Costs $& and $' too", 'kick bob bye']);
  clock.now += 30_000;
  report([bob, cat]); // ann leaves at the window's end
  clock.now += 1;
  report([cat]); // bob, one millisecond past it
  report([]); // cat was never kicked
  expect(changes.slice(1)).toEqual([
    { joined: [], left: ['ann'], reason: 'kick' },
    { joined: [], left: ['bob'], reason: 'left' },
    { joined: [], left: ['cat'], reason: 'left' },
  ]);
});
