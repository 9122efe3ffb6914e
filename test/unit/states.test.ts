import { transitions } from '../../src/runtime/server/states';
import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every `from → to` pair of the transition table in the spec's Servers tag description. */
function specPairs(): string[] {
  const servers = (loadSpec().document as Json).tags.find((t: Json) => t.name === 'Servers');
  const rows = (servers.description as string).split('\n').filter((l) => /^\| `/.test(l));
  return rows.flatMap((row) => {
    const [from, to] = row.split('|').slice(1, 3).map((cell) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]));
    return from.flatMap((f) => to.map((t) => `${f} → ${t}`));
  });
}

test('the spec documents exactly the state transitions the runtime makes', () => {
  const code = [...new Set(transitions.map((t) => `${t.from} → ${t.to}`))].sort();
  expect([...new Set(specPairs())].sort()).toEqual(code);
});
