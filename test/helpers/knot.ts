// A real authoritative DNS server for tests: Debian's Knot DNS (`knotd`, installed by .ci/run), on loopback, with
// one zone that takes RFC 2136 updates signed with one TSIG key, and `dig` to read what it serves.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import dns from 'node:dns';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Knot {
  port: number;
  zone: string;
  /** DNS_TSIG_KEY's form: hmac-sha256:<name>:<secret>. */
  key: string;
  /** What `dig` reads at a name, one record's data per line (`+short`), over TCP. */
  dig(name: string, type: string): string[];
  stop(): Promise<void>;
  /**
   * Points this process's Node resolver at it for the zone's names only, as a player's is at the public DNS that
   * delegates the zone: c-ares (resolveSrv, which minecraft-protocol asks) and net.connect's lookup, answered from
   * the A record. Returns the undo (jest hands every file the same core modules: undo it in the file's afterAll).
   */
  pointNodeResolver(): () => void;
  /** Stops and starts it again on the same port and files (the "DNS server down" case). */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Starts knotd with `zone` (default `play.test`); resolves once it answers for the zone. */
export async function startKnot(zone = 'play.test'): Promise<Knot> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gsh-knot-'));
  mkdirSync(path.join(dir, 'db'));
  const port = await freePort();
  const secret = randomBytes(32).toString('base64');
  writeFileSync(path.join(dir, 'knot.conf'), `server:
    listen: 127.0.0.1@${port}
    rundir: ${dir}
log:
  - target: stderr
    any: warning
database:
    storage: ${dir}/db
key:
  - id: gsh-test
    algorithm: hmac-sha256
    secret: ${secret}
acl:
  - id: gsh-update
    key: gsh-test
    action: [update, transfer]
template:
  - id: default
    storage: ${dir}
    file: "%s.zone"
zone:
  - domain: ${zone}
    acl: gsh-update
`);
  writeFileSync(path.join(dir, `${zone}.zone`), `$ORIGIN ${zone}.\n$TTL 60\n@ SOA ns.${zone}. hostmaster.${zone}. 1 60 60 600 5\n@ NS ns.${zone}.\nns A 127.0.0.1\n`);
  let child: ChildProcess | null = null;
  const dig = (name: string, type: string) =>
    execFileSync('dig', ['@127.0.0.1', '-p', String(port), '+tcp', '+short', '+time=2', '+tries=1', name, type], { encoding: 'utf8' })
      .split('\n').map((l) => l.trim()).filter((l) => l !== '');
  async function start(): Promise<void> {
    child = spawn('/usr/sbin/knotd', ['-c', path.join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
    for (let i = 0; i < 100; i++) {
      try {
        if (dig(zone, 'SOA').length > 0) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('knotd did not answer within 10 s');
  }
  async function halt(): Promise<void> {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  }
  await start();
  function pointNodeResolver(): () => void {
    const originalLookup = dns.lookup;
    const originalServers = dns.getServers();
    dns.setServers([`127.0.0.1:${port}`]);
    dns.lookup = ((host: string, options: unknown, callback: unknown) => {
      const cb = (typeof options === 'function' ? options : callback) as (err: Error | null, address?: string | dns.LookupAddress[], family?: number) => void;
      const opts = (typeof options === 'object' && options !== null ? options : {}) as dns.LookupOptions;
      if (!host.endsWith(`.${zone}`)) return (originalLookup as (...a: unknown[]) => void)(host, options, callback);
      dns.resolve4(host, (err, addresses) => {
        if (err) cb(err);
        else if (opts.all) cb(null, addresses.map((address) => ({ address, family: 4 })));
        else cb(null, addresses[0], 4);
      });
    }) as typeof dns.lookup;
    return () => {
      dns.lookup = originalLookup;
      dns.setServers(originalServers);
    };
  }
  return {
    port,
    zone,
    pointNodeResolver,
    key: `hmac-sha256:gsh-test:${secret}`,
    dig,
    pause: halt,
    resume: start,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
