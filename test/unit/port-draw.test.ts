// A new server's port (src/store/placement.ts portsIn.draw; SECURITY.md "Counting other tenants' servers from port
// numbers"): uniform over the free ports of the range, never a taken one, whether the range is sparse (random ports
// checked one by one in the UNIQUE index) or nearly full (the used ports read and the n-th free one taken). Real
// SQLite file; 10,000 draws per case, so each free port's share is within a quarter of its due by a wide margin.
import fs from 'node:fs';
import path from 'node:path';
import { openDb, type Db } from '../../src/store/db';
import { portsIn } from '../../src/store/placement';
import { tempDir } from '../helpers/app';

let dir: string;
let db: Db;

beforeEach(() => {
  dir = tempDir('port-draw');
  db = openDb(path.join(dir, 'db.sqlite'));
  db.prepare("INSERT INTO users (id, email, created_at) VALUES ('usr_ports', 'ports@example.com', '2026-01-01T00:00:00Z')").run();
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function take(ports: number[]): void {
  const insert = db.prepare(`INSERT INTO servers (id, user_id, name, plan, version, software, game_version, state, port, created_at, updated_at)
    VALUES (?, 'usr_ports', 'x', 'micro', 'flying-squid-1.20', 'flying-squid', '1.20', 'stopped', ?, 'now', 'now')`);
  for (const port of ports) insert.run(`srv_port${port}`, port);
}

const cases: [string, { range: [number, number]; taken: number[] }][] = [
  ['a sparse range: half its ports taken', { range: [30000, 30019], taken: [30000, 30002, 30004, 30006, 30008, 30011, 30013, 30015, 30017, 30019] }],
  ['a range nearly full: 3 of 100 free', { range: [31000, 31099], taken: Array.from({ length: 100 }, (_, i) => 31000 + i).filter((p) => ![31000, 31050, 31099].includes(p)) }],
  ['another range\'s servers do not count', { range: [32000, 32003], taken: [31999, 32004, 32001] }],
];

for (const [name, { range, taken }] of cases) {
  test(name, () => {
    take(taken);
    const free = Array.from({ length: range[1] - range[0] + 1 }, (_, i) => range[0] + i).filter((p) => !taken.includes(p));
    const seen = new Map<number, number>();
    const draws = 10_000;
    const ports = portsIn(db);
    for (let i = 0; i < draws; i++) {
      const port = ports.draw(...range)!;
      seen.set(port, (seen.get(port) ?? 0) + 1);
    }
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual(free);
    for (const count of seen.values()) expect(Math.abs(count - draws / free.length)).toBeLessThan(draws / free.length / 4);
  });
}

test('a full range draws nothing', () => {
  take([33000, 33001, 33002]);
  expect(portsIn(db).draw(33000, 33002)).toBeNull();
});
