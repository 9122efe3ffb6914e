// The state machine table (src/runtime/server/states.ts), table-driven; the spec carries the same table.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canTransition, checkTransition, IllegalTransition, serverStates, transitions, type ServerState, type TransitionEvent } from '../../src/runtime/server/states';
import { ServerSupervisor, type SupervisorDeps } from '../../src/runtime/server/server-supervisor';
import { runtimeConfigDefaults } from '../../src/runtime/server/types';
import { nicenessFor } from '../../src/runtime/host/cpu-priority';

const allowed: [ServerState, ServerState][] = [
  ['installing', 'stopped'], ['installing', 'crashed'], ['installing', 'deleting'],
  ['stopped', 'starting'], ['stopped', 'deleting'],
  ['starting', 'running'], ['starting', 'crashed'], ['starting', 'stopping'], ['starting', 'stopped'], ['starting', 'deleting'],
  ['running', 'stopping'], ['running', 'crashed'], ['running', 'stopped'], ['running', 'deleting'],
  ['stopping', 'stopped'], ['stopping', 'deleting'],
  ['crashed', 'starting'], ['crashed', 'stopped'], ['crashed', 'deleting'],
  // A node that stops answering (docs/architecture.md "Nodes and placement"): every placed state, and back.
  ['stopped', 'unreachable'], ['starting', 'unreachable'], ['running', 'unreachable'], ['stopping', 'unreachable'],
  ['crashed', 'unreachable'], ['unreachable', 'running'], ['unreachable', 'stopped'], ['unreachable', 'deleting'],
];

const cases: [string, { from: ServerState; to: ServerState; want: boolean }][] = serverStates.flatMap((from) =>
  serverStates.map((to): [string, { from: ServerState; to: ServerState; want: boolean }] => {
    const want = allowed.some(([f, t]) => f === from && t === to);
    return [`${from} → ${to} is ${want ? 'allowed' : 'refused'}`, { from, to, want }];
  }),
);

for (const [name, { from, to, want }] of cases) {
  test(name, () => expect(canTransition(from, to)).toBe(want));
}

test('deleting is terminal and every other state can be deleted', () => {
  expect(transitions.filter((t) => t.from === 'deleting')).toEqual([]);
  for (const s of serverStates.filter((s) => s !== 'deleting')) expect(canTransition(s, 'deleting')).toBe(true);
});

test('running is reached only on the ready signal, or when a node returns with the game still running', () => {
  expect(transitions.filter((t) => t.to === 'running')).toEqual([
    { from: 'starting', to: 'running', on: 'ready' },
    { from: 'unreachable', to: 'running', on: 'node_returned' },
  ]);
});

// The table is enforced (issue 26): every (from, to, on) the table lacks throws, and the owner changes nothing on it.
const events: TransitionEvent[] = [
  'install_succeeded', 'install_failed', 'start', 'auto_restart', 'ready', 'start_failed', 'stop', 'exited', 'crash',
  'cleared', 'service_boot', 'node_lost', 'node_returned', 'remove',
];
const pairs = serverStates.flatMap((from) => serverStates.map((to) => [`${from} → ${to}`, from, to] as const));

test.each(pairs)('%s: checkTransition allows exactly the events of the table', (_name, from, to) => {
  for (const on of events) {
    const inTable = transitions.some((t) => t.from === from && t.to === to && t.on === on);
    if (inTable) expect(checkTransition(from, to, on)).toBe(to);
    else expect(() => checkTransition(from, to, on)).toThrow(IllegalTransition);
  }
});

test('an illegal transition asked of a server throws and writes nothing', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-states-'));
  const written: string[] = [];
  const published: string[] = [];
  const deps = {
    servers: { find: () => undefined, setState: (_id: string, state: string) => void written.push(state) },
    config: { ...runtimeConfigDefaults, dataDir: dir },
    now: () => Date.now(),
    emitState: (e: { state: string }) => void published.push(e.state),
  } as unknown as SupervisorDeps;
  try {
    const installing = new ServerSupervisor('srv_states1', 'installing', deps);
    // A previous life's reset applies to live states only: installing → stopped on service_boot is not in the table.
    expect(() => installing.resetAtBoot()).toThrow(IllegalTransition);
    expect(installing.state).toBe('installing');
    const running = new ServerSupervisor('srv_states2', 'running', deps);
    running.resetAtBoot();
    expect(running.state).toBe('stopped');
    expect([written, published]).toEqual([['stopped'], ['stopped']]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const niceness: [number, number][] = [[1024, 0], [4096, 0], [512, 3], [256, 6], [100, 10], [1, 19]];
for (const [shares, nice] of niceness) {
  test(`cpu_shares ${shares} → niceness ${nice}`, () => expect(nicenessFor(shares)).toBe(nice));
}
