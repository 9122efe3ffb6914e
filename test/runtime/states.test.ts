// The state machine table (src/runtime/states.ts), table-driven; the spec carries the same table.
import { canTransition, serverStates, transitions, type ServerState } from '../../src/runtime/states';
import { nicenessFor } from '../../src/runtime/cpu-priority';

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

const niceness: [number, number][] = [[1024, 0], [4096, 0], [512, 3], [256, 6], [100, 10], [1, 19]];
for (const [shares, nice] of niceness) {
  test(`cpu_shares ${shares} → niceness ${nice}`, () => expect(nicenessFor(shares)).toBe(nice));
}
