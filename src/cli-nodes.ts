// `gsh node …`: the operator's nodes (docs/architecture.md "Nodes and placement"; README "Nodes"). The
// command names and flags are an interface scripts depend on: keep them.
import { parseArgs } from 'node:util';
import { loadConfig, portRange } from './config';
import { openDb } from './store/db';
import { systemClock } from './clock';
import { plans } from './catalog/plans';
import type { Node, NodesRepo } from './store/nodes-repo';
import { createOperatorStore } from './store';
import { createEngine, parseDockerHost } from './runtime/host/docker/engine';
import { evacuate } from './cli-moves';
import { lose, LOSE_HELP, LOSE_USAGE } from './cli-node-lose';
import { describeLinkError, prepareLink, rotate } from './cli-node-certs';
import { nodeCertDir } from './runtime/host/docker/engine-tls';
import fs from 'node:fs';
import { failure, jsonLine, UsageError } from './cli-usage';

export const NODE_USAGE = `  gsh node add --name <name> --docker-host <url> [--public-host <host>] [--memory-mb <n>] [--ports <low>-<high>]
               [--make-certs | --tls-ca <file> --tls-cert <file> --tls-key <file> | --insecure]
  gsh node certs rotate <name> [--server | --tls-ca <file> --tls-cert <file> --tls-key <file>]
  gsh node list [--json]
  gsh node drain <name> [--undo | --evacuate]
  gsh node remove <name>
${LOSE_USAGE}`;

export const NODE_HELP = `node add registers a Docker engine (unix:///path or tcp://host:port) as a node, once it answers. Its servers
are reached at --public-host (default: the host of a tcp:// URL, else GAME_HOST), on --ports (default
GAME_PORT_RANGE); placement never gives its servers more plan memory than --memory-mb (default: the engine's
total memory). New servers go to the node with the most free plan memory that has a free port. After node drain
a node takes no new server (--undo takes that back; --evacuate also moves its servers off it, see server move); node
remove refuses while any server is on it.

A tcp:// engine off loopback is reached over mutual TLS (dockerd --tlsverify): --make-certs makes a CA, the node's
server certificate (for the URL's host) and this service's client certificate under DATA_DIR/nodes/<name>/, and
prints what to copy to the node and the dockerd flags (run the same add again once the node runs with them);
--tls-ca/--tls-cert/--tls-key take your own (the CA that signed the node's certificate, this service's client
certificate and key). --insecure takes a plain tcp:// engine off loopback anyway; each start logs a warning.
node certs rotate issues this service a new client certificate from the node's CA (or takes --tls-* files),
checks it against the engine, and switches new connections to it; games keep running. --server issues the node a
new server certificate instead, which its dockerd reads when restarted.
node list prints each node on a line: name, state, engine, public host, ports, servers, plan memory in use. With
--json it prints one JSON array of objects: name, state ("active", "drained", "unreachable" or "lost"),
unreachable_since and lost_at (RFC 3339, or null), docker_host, public_host, ports ({"low", "high"}), tls (true
when reached over mutual TLS), servers (how many are on it), memory_mb (its plan memory) and memory_mb_used.

${LOSE_HELP}`;

class NodeUsageError extends UsageError {}

const MIB = 1024 * 1024;
const ANSWER_MS = 5_000;

/** Runs `gsh node <argv…>`; resolves with the exit code (2: bad usage, 1: refused or failed). */
export async function runNodeCli(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let db: ReturnType<typeof openDb> | undefined;
  try {
    const { positionals, values } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        'docker-host': { type: 'string' },
        'public-host': { type: 'string' },
        'memory-mb': { type: 'string' },
        ports: { type: 'string' },
        undo: { type: 'boolean' },
        evacuate: { type: 'boolean' },
        'tls-ca': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'make-certs': { type: 'boolean' },
        insecure: { type: 'boolean' },
        server: { type: 'boolean' },
        json: { type: 'boolean' },
        force: { type: 'boolean' },
        'no-wait': { type: 'boolean' },
      },
    });
    const [command = '', name] = positionals;
    const config = loadConfig(env);
    db = openDb(config.dbFile);
    const { nodes, moves, recoveries } = createOperatorStore(db, systemClock, { defaults: config.quotas, plans });
    switch (command) {
      case 'add':
        return await add(nodes, values, config, out, err);
      case 'list':
        list(nodes, values.json === true, out);
        return 0;
      case 'certs': {
        if (name !== 'rotate') throw new NodeUsageError('The node certs command is "node certs rotate <name>".');
        const node = nodes.get(needName(positionals[2]));
        return await rotate(config.dataDir, node, parseDockerHost(node?.dockerHost ?? 'unix:///none'), values, out, err);
      }
      case 'drain': {
        if (values.undo && values.evacuate) throw new NodeUsageError('--undo and --evacuate do not go together.');
        if (!nodes.setDraining(needName(name), values.undo !== true)) return refuse(err, `There is no node ${name}.`);
        if (values.evacuate) {
          out(`Node ${name} is drained: it takes no new servers.`);
          return await evacuate({ nodes, moves }, name, out, err);
        }
        out(values.undo ? `Node ${name} takes new servers again.` : `Node ${name} is drained: it takes no new servers; those on it stay (--evacuate moves them).`);
        return 0;
      }
      case 'lose':
        return await lose({ nodes, recoveries }, config.dataDir, needName(name), { force: values.force, noWait: values['no-wait'] }, out, err);
      case 'remove': {
        const outcome = nodes.remove(needName(name));
        if (outcome === 'missing') return refuse(err, `There is no node ${name}.`);
        if (outcome === 'in_use') return refuse(err, `Node ${name} still has servers; drain it, and delete them (or wait for their owners to) first.`);
        fs.rmSync(nodeCertDir(config.dataDir, name), { recursive: true, force: true });
        out(`Removed node ${name}.`);
        return 0;
      }
      default:
        throw new NodeUsageError(`Unknown node command "${command}".`);
    }
  } catch (e) {
    return failure(e, err, NODE_USAGE, ['node', ...argv]);
  } finally {
    db?.close();
  }
}

function refuse(err: (s: string) => void, message: string): number {
  err(`gsh: ${message}`);
  return 1;
}

function needName(name: string | undefined): string {
  if (!name || !/^[a-z0-9][a-z0-9-]{0,31}$/.test(name)) {
    throw new NodeUsageError(`A node name is 1 to 32 lowercase letters, digits and dashes; got "${name ?? ''}".`);
  }
  return name;
}

type Values = Record<string, string | boolean | undefined>;
const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

/** Every flag is checked and the engine asked before anything is written: a refused add changes nothing. */
async function add(nodes: NodesRepo, values: Values, config: ReturnType<typeof loadConfig>, out: (s: string) => void, err: (s: string) => void) {
  const name = needName(str(values.name));
  const dockerHost = str(values['docker-host']);
  if (!dockerHost) throw new NodeUsageError('--docker-host is required.');
  let endpoint;
  try {
    endpoint = parseDockerHost(dockerHost);
  } catch (e) {
    throw new NodeUsageError((e as Error).message.replace('DOCKER_HOST', '--docker-host'));
  }
  const rawMemory = str(values['memory-mb']);
  if (rawMemory !== undefined && !/^[1-9]\d{0,8}$/.test(rawMemory)) throw new NodeUsageError(`--memory-mb takes a whole number of MiB from 1 to 999999999; got "${rawMemory}".`);
  let ports: [number, number];
  try {
    ports = portRange(str(values.ports) ?? `${config.gamePortRange[0]}-${config.gamePortRange[1]}`);
  } catch {
    throw new NodeUsageError(`--ports takes a range like 25565-25664: two ports from 1024 to 65535, the lower first; got "${str(values.ports)}".`);
  }
  const publicHost = str(values['public-host']) ?? endpoint.host ?? config.gameHost;
  if (!/^[A-Za-z0-9.:_[\]-]{1,253}$/.test(publicHost)) throw new NodeUsageError(`--public-host must be a host name or IP address; got "${publicHost}".`);
  if (nodes.get(name)) return refuse(err, `There is a node ${name} already.`);
  const link = prepareLink(config.dataDir, name, dockerHost, endpoint, values, out);

  let info: { MemTotal?: number };
  try {
    info = await createEngine(dockerHost, link.certDir ? { certDir: link.certDir } : undefined).json<{ MemTotal?: number }>('GET', '/info', undefined, ANSWER_MS);
  } catch (e) {
    link.discard();
    if (link.hint) out(link.hint);
    return refuse(err, `The engine at ${dockerHost} did not answer (${describeLinkError(e as Error)}); nothing was added.${link.hint ? ' Run this command again once the node runs with its certificates.' : ''}`);
  }
  const memoryMb = rawMemory !== undefined ? Number(rawMemory) : Math.floor((info.MemTotal ?? 0) / MIB);
  if (memoryMb <= 0) {
    link.discard();
    return refuse(err, `The engine at ${dockerHost} did not report its memory; give --memory-mb.`);
  }
  link.commit();
  if (!nodes.add({ name, dockerHost, publicHost, memoryMb, ports, tls: link.tls })) return refuse(err, `There is a node ${name} already.`);
  out(`Added node ${name}: engine ${dockerHost}${link.tls ? ' over mutual TLS' : ''}, players reach ${publicHost} on ports ${ports[0]}-${ports[1]}, ${memoryMb} MiB of plan memory.`);
  const overlapping = nodes.list().filter((n) => n.name !== name && n.ports[0] <= ports[1] && ports[0] <= n.ports[1]);
  if (overlapping.length > 0) {
    out(`Note: its ports overlap those of ${overlapping.map((n) => n.name).join(', ')}; a port is given to one server across all nodes, so they share them.`);
  }
  return 0;
}

function state(n: Node): string {
  if (n.lostAt) return `lost since ${n.lostAt}`;
  if (n.unreachableSince) return `unreachable since ${n.unreachableSince}`;
  return n.draining ? 'drained' : 'active';
}

function list(nodes: NodesRepo, json: boolean, out: (s: string) => void): void {
  const use = nodes.use();
  const all = nodes.list();
  if (json) {
    out(jsonLine(all.map((n) => nodeJson(n, use.get(n.name) ?? { servers: 0, memoryMb: 0 }))));
    return;
  }
  if (all.length === 0) out('No nodes. With RUNTIME=docker the service adds node local (DOCKER_HOST) at its first start.');
  for (const n of all) {
    const u = use.get(n.name) ?? { servers: 0, memoryMb: 0 };
    out([n.name, state(n), n.dockerHost, `public ${n.publicHost}`, `ports ${n.ports[0]}-${n.ports[1]}`, `${u.servers} servers`, `memory ${u.memoryMb}/${n.memoryMb} MiB`].join('\t'));
  }
}

/** A node as `node list --json` prints it: the fields NODE_HELP names, picked one by one so that they stay stable. */
function nodeJson(n: Node, u: { servers: number; memoryMb: number }) {
  const stateName = n.lostAt ? 'lost' : n.unreachableSince ? 'unreachable' : n.draining ? 'drained' : 'active';
  return {
    name: n.name,
    state: stateName,
    unreachable_since: n.unreachableSince,
    lost_at: n.lostAt,
    docker_host: n.dockerHost,
    public_host: n.publicHost,
    ports: { low: n.ports[0], high: n.ports[1] },
    tls: n.tls,
    servers: u.servers,
    memory_mb: n.memoryMb,
    memory_mb_used: u.memoryMb,
  };
}
