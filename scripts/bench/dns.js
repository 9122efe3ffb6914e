'use strict';
/**
 * `npm run bench -- dns` (issue 43; docs/architecture.md "DNS names"): how soon after a move players who look the
 * name up find the server where it went. The service (in this process, RUNTIME=docker, DNS_ZONE set, the
 * publisher as it runs in production: nudged by events, swept every 5 s) on two engines as nodes.js sets them up,
 * node one with public host 127.0.0.1 and node two with 127.0.0.2 (both loopback), and a real authoritative DNS
 * server (Knot DNS, as test/helpers/knot.ts starts it: its setup is copied here, the bench runs against dist/ and
 * no test code). One running flying-squid server with a `dns_name` is moved back and forth `rounds` times.
 *
 * Three moments per move, polled every 10 ms: the server's row takes the new address (the move's switch, which
 * sends server.updated), the move ends (`done`, the server `running` on the other node), and the DNS server
 * answers the new SRV record (`_minecraft._tcp.<name>`: the new port, its target's A record the new host),
 * asked over UDP as a resolver would. Printed: the median time from the move's end to the new SRV record
 * answering (0 when it answered before the move ended), and from the new address to it.
 */
const dns = require('node:dns');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { dist, tempDir, median, sleep, fmt } = require('./lib');
const { removeAll, twoEngines, untilTrue } = require('./nodes');

const ROOT = path.resolve(__dirname, '..', '..');
const PORTS = { one: '28760-28769', two: '28770-28779' };
const HOSTS = { one: '127.0.0.1', two: '127.0.0.2' };
const ZONE = 'play.test';

async function runDns({ rounds = 6 } = {}) {
  const { dockerHost, node2Host, engines, stop } = await twoEngines();
  const dir = tempDir('dns');
  const knot = await startKnot(path.join(dir, 'knot'));
  try {
    const ctx = await up(dir, dockerHost, node2Host, knot);
    try {
      const result = await moves(ctx, knot, rounds);
      console.log(`  move's end → new SRV record answering: median ${fmt(result.done_to_srv_ms, 0)} ms, most ${fmt(Math.max(...result.runs.done_to_srv), 0)} ms (${rounds} moves)`);
      console.log(`  new address (switch) → new SRV record answering: median ${fmt(result.address_to_srv_ms, 0)} ms; the move's switch → end: median ${fmt(result.address_to_done_ms, 0)} ms`);
      return result;
    } finally {
      await ctx.service.stop();
      await removeAll(engines, dir);
    }
  } finally {
    await knot.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    stop();
  }
}

/** The service on both nodes, publishing into Knot's zone, and one named flying-squid server running on node one. */
async function up(dir, dockerHost, node2Host, knot) {
  const { runCli } = dist('cli');
  const { loadConfig } = dist('config');
  const { startService } = dist('service');
  const { silentLogger } = dist('log');
  for (const [name, host, ports] of [['one', dockerHost, PORTS.one], ['two', node2Host, PORTS.two]]) {
    const code = await runCli(['node', 'add', '--name', name, '--docker-host', host, '--public-host', HOSTS[name], '--memory-mb', '4000', '--ports', ports], { DATA_DIR: dir }, () => undefined, console.error);
    if (code !== 0) throw new Error(`gsh node add ${name} failed`);
  }
  const service = await startService(loadConfig({
    DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', RUNTIME: 'docker', DOCKER_HOST: dockerHost, NODE_CHECK_INTERVAL_S: '1',
    DNS_ZONE: ZONE, DNS_SERVER: `127.0.0.1:${knot.port}`, DNS_TSIG_KEY: knot.key,
  }), silentLogger);
  // Through the API, as a customer names a server (the dns_name rules and the event that nudges the publisher).
  const user = service.store.users.ensure('bench@example.com');
  const { token } = service.store.tokens.create(user.id, { name: 'bench', scopes: ['servers:read', 'servers:write'] });
  const base = `http://127.0.0.1:${service.http.address().port}`;
  service.store.nodes.setDraining('two', true);
  const res = await fetch(`${base}/v1/servers`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Wanderer', plan: 'micro', version: 'flying-squid-1.20', dns_name: 'wanderer' }),
  });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  const { id } = await res.json();
  service.store.nodes.setDraining('two', false);
  const runtime = service.runtime;
  await untilTrue('installed', () => runtime.lifecycle.state(id) === 'stopped', 600_000, 200);
  runtime.power.requestAction(id, user.id, 'start');
  await untilTrue('running', () => runtime.lifecycle.state(id) === 'running');
  return { service, runtime, id, dir };
}

async function moves(ctx, knot, rounds) {
  const { service, runtime, id } = ctx;
  const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${knot.port}`]);
  /** The SRV record's port and its target's address as the DNS server answers now (null while it has none). */
  const answer = async () => {
    try {
      const [srv] = await resolver.resolveSrv(`_minecraft._tcp.wanderer.${ZONE}`);
      const [a] = await resolver.resolve4(srv.name);
      return { port: srv.port, host: a };
    } catch {
      return null;
    }
  };
  const where = () => service.store.servers.find(id).address;
  await untilTrue('published at first', async () => {
    const now = await answer();
    return now && now.port === where().port && now.host === where().host;
  }, 60_000, 100);

  const runs = { done_to_srv: [], address_to_srv: [], address_to_done: [] };
  for (let r = 0; r < rounds; r++) {
    const to = r % 2 ? 'one' : 'two';
    const before = where();
    const asked = service.store.moves.request(id, to);
    if (!asked.move) throw new Error(asked.refused);
    const at = { address: null, done: null, srv: null };
    const deadline = Date.now() + 300_000;
    let wanted = null;
    while (at.done === null || at.srv === null) {
      if (Date.now() > deadline) throw new Error(`move ${r + 1}: timed out (${JSON.stringify(at)})`);
      const now = Date.now();
      const m = service.store.moves.get(asked.move.id);
      if (m.status === 'failed') throw new Error(`the move failed: ${m.error}`);
      const address = where();
      if (at.address === null && address.port !== before.port) [at.address, wanted] = [now, address];
      if (at.done === null && m.status === 'done' && runtime.lifecycle.state(id) === 'running') at.done = now;
      if (wanted && at.srv === null) {
        const seen = await answer();
        if (seen && seen.port === wanted.port && seen.host === wanted.host) at.srv = Date.now();
      }
      await sleep(10);
    }
    if (wanted.host !== HOSTS[to]) throw new Error(`the server went to ${wanted.host}, not node ${to}'s ${HOSTS[to]}`);
    runs.done_to_srv.push(Math.max(0, at.srv - at.done));
    runs.address_to_srv.push(at.srv - at.address);
    runs.address_to_done.push(at.done - at.address);
  }
  return {
    moves: rounds, done_to_srv_ms: median(runs.done_to_srv), address_to_srv_ms: median(runs.address_to_srv),
    address_to_done_ms: median(runs.address_to_done), runs,
  };
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Knot DNS with ZONE, which takes updates signed with one TSIG key (as test/helpers/knot.ts sets it up). */
async function startKnot(dir) {
  fs.mkdirSync(path.join(dir, 'db'), { recursive: true });
  const port = await freePort();
  const secret = crypto.randomBytes(32).toString('base64');
  fs.writeFileSync(path.join(dir, 'knot.conf'), [
    'server:', `    listen: 127.0.0.1@${port}`, `    rundir: ${dir}`,
    'log:', '  - target: stderr', '    any: warning',
    'database:', `    storage: ${dir}/db`,
    'key:', '  - id: gsh-bench', '    algorithm: hmac-sha256', `    secret: ${secret}`,
    'acl:', '  - id: gsh-update', '    key: gsh-bench', '    action: [update, transfer]',
    'template:', '  - id: default', `    storage: ${dir}`, '    file: "%s.zone"',
    'zone:', `  - domain: ${ZONE}`, '    acl: gsh-update', '',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, `${ZONE}.zone`), `$ORIGIN ${ZONE}.\n$TTL 60\n@ SOA ns.${ZONE}. hostmaster.${ZONE}. 1 60 60 600 5\n@ NS ns.${ZONE}.\nns A 127.0.0.1\n`);
  const child = spawn('/usr/sbin/knotd', ['-c', path.join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const resolver = new dns.promises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  await untilTrue('knotd answering', () => resolver.resolveSoa(ZONE).then(() => true, () => false), 10_000, 100);
  return {
    port,
    key: `hmac-sha256:gsh-bench:${secret}`,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

module.exports = { runDns };
