// A real Luanti client (Debian's minetest) joining a server, headless under Xvfb with software GL
// (test/runtime/luanti.test.ts, test/e2e/luanti-data.test.ts). Its home is a temp folder, so no user's settings count.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { tempDir } from './app';

export interface LuantiClient {
  /** Ends xvfb-run, Xvfb and the client, then removes the client's home; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * `address` may be a host name, which the client resolves itself (getaddrinfo). `resolvConf`: a file that stands in
 * for /etc/resolv.conf for this client alone, bind-mounted in a mount namespace of its own (`unshare --mount`), so
 * its resolver asks the test's DNS server and nothing else on the machine sees the change
 * (test/e2e/dns-luanti.test.ts).
 */
export function startLuantiClient(port: number, name: string, { address = '127.0.0.1', resolvConf }: { address?: string; resolvConf?: string } = {}): LuantiClient {
  const home = tempDir('luanti-client');
  const game = ['xvfb-run', '-a', '/usr/games/minetest', '--go', '--address', address, '--port', String(port), '--name', name, '--password', ''];
  const argv = resolvConf ? ['unshare', '--mount', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf, ...game] : game;
  const child = spawn(argv[0], argv.slice(1), {
    env: { PATH: process.env.PATH, HOME: home, TMPDIR: home }, // xvfb-run's and the audio's temp folders go with it
    detached: true, // its own process group: xvfb-run, Xvfb and the client end together
    stdio: 'ignore',
  });
  const group = -child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  let stopped: Promise<void> | undefined;
  return {
    stop: () => (stopped ??= (async () => {
      // SIGTERM first: Xvfb then removes its /tmp/.X<n>-lock and socket, which a SIGKILL leaves behind.
      if (alive()) process.kill(group, 'SIGTERM');
      const deadline = Date.now() + 10_000;
      while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (alive()) process.kill(group, 'SIGKILL');
      fs.rmSync(home, { recursive: true, force: true });
    })()),
  };
}
