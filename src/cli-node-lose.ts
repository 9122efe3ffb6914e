// `gsh node lose NAME`: a node gone for good, and the recovery of its servers from their backups on this host
// (docs/architecture.md "When a node is lost"; README "Nodes"). The CLI records the request (recoveries-repo.ts); the
// running service carries out each recovery on its server's door (src/runtime/services/recovery.ts).
import type { NodesRepo } from './store/nodes-repo';
import type { RecoveriesRepo, Recovery } from './store/recoveries-repo';
import { createEngine } from './runtime/host/docker/engine';
import { nodeCertDir } from './runtime/host/docker/engine-tls';

export const LOSE_USAGE = `  gsh node lose <name> [--force] [--no-wait]`;

export const LOSE_HELP = `node lose says a node is gone for good (its engine and the files on it will not come back): it takes no server
again, and each server on it is recovered on another node: same id, a new address there (server.updated), its newest
ready backup (kept on this host) restored, or the files of a new server if it had none, started again if it was meant
to run; its owner gets server.recovered naming the backup and its age. Refused while the node's engine answers (drain
--evacuate moves its servers with their files), unless --force, which stops its games and leaves its files behind. If
the node ever answers again, what it kept of the recovered servers is removed, never started. It waits for the
recoveries unless --no-wait; the service must be running to carry them out; run it again to retry failed ones.`;

const POLL_MS = 500;
const ANSWER_MS = 5_000;

type Out = (s: string) => void;

/** Whether the node's engine answers now (its TLS material if it has some). */
async function answers(node: { name: string; dockerHost: string; tls: boolean }, dataDir: string): Promise<boolean> {
  try {
    await createEngine(node.dockerHost, node.tls ? { certDir: nodeCertDir(dataDir, node.name) } : undefined).json('GET', '/version', undefined, ANSWER_MS);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `gsh node lose <name>`; resolves with the exit code (1: refused, or a recovery failed). Refused, writing
 * nothing: an unknown node, the only node not lost, an engine that answers (without `force`).
 */
export async function lose(
  { nodes, recoveries }: { nodes: NodesRepo; recoveries: RecoveriesRepo },
  dataDir: string,
  name: string,
  flags: { force?: boolean; noWait?: boolean },
  out: Out,
  err: Out,
): Promise<number> {
  const node = nodes.get(name);
  if (!node) return refuse(err, `There is no node ${name}.`);
  if (!nodes.list().some((n) => n.name !== name && n.lostAt === null)) {
    return refuse(err, `Node ${name} is the only node left; add another (gsh node add) for its servers to be recovered on, then run this again.`);
  }
  if (node.lostAt === null && flags.force !== true && (await answers(node, dataDir))) {
    return refuse(err, `Node ${name} answers: its files are still there. gsh node drain ${name} --evacuate moves its servers with their files; --force loses it anyway (its games stopped, its files left behind).`);
  }
  const asked = recoveries.lose(name);
  if ('refused' in asked) return refuse(err, asked.refused);
  out(`Node ${name} is lost: it takes no server again. ${asked.recoveries.length === 0 ? 'No server is on it.' : `Recovering ${asked.recoveries.length} server(s) from their newest backups on other nodes.`}`);
  if (flags.noWait === true || asked.recoveries.length === 0) return 0;
  const ended = await waitFor(recoveries, asked.recoveries.map((r) => r.id), out);
  let failed = 0;
  for (const r of ended) {
    if (r.status === 'failed') {
      failed++;
      err(`gsh: recovering ${r.serverId} failed; it stays on node ${r.fromNode}: ${r.error ?? 'no reason recorded'}`);
    } else {
      out(`Recovered ${r.serverId} on node ${r.toNode ?? '?'} ${r.backupId ? `from backup ${r.backupId} of ${r.backupCreatedAt ?? '?'}` : 'with the files of a new server (it had no backup)'}.`);
    }
  }
  return failed === 0 ? 0 : 1;
}

function refuse(err: Out, message: string): number {
  err(`gsh: ${message}`);
  return 1;
}

/** Polls the recoveries until each is done or failed, saying each one's steps once. */
async function waitFor(recoveries: RecoveriesRepo, ids: string[], out: Out): Promise<Recovery[]> {
  const said = new Set<string>();
  const steps: Record<string, (r: Recovery) => string> = {
    pending: (r) => `${r.serverId}: waiting for the service to take it (it must be running).`,
    switched: (r) => `${r.serverId}: placed on node ${r.toNode ?? '?'}; restoring its newest backup there.`,
    restored: (r) => `${r.serverId}: files restored; starting it if it was meant to run.`,
  };
  for (;;) {
    const now = ids.map((id) => recoveries.get(id)).filter((r): r is Recovery => r !== undefined);
    for (const r of now) {
      const key = `${r.id} ${r.status}`;
      if (!said.has(key) && r.status in steps) out(steps[r.status](r));
      said.add(key);
    }
    if (now.every((r) => r.status === 'done' || r.status === 'failed')) return now;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
