// The link half of `gsh node add` and `gsh node certs rotate`: mutual TLS (Docker's --tlsverify) to a node's
// engine, or a plain link only where it is safe or the operator said --insecure (README "Nodes"; issue 41 §1).
// The files are node-certs.ts's; what the engine connections read, engine-tls.ts.
import fs from 'node:fs';
import path from 'node:path';
import { createEngine, type EngineEndpoint } from './runtime/host/docker/engine';
import { isInsecureLink, nodeCertDir, TLS_FILES } from './runtime/host/docker/engine-tls';
import { UsageError } from './cli-usage';
import { CA_KEY, certNames, describeCert, installClientSide, issue, issueServerSide, makeNodeCerts, NODE_SIDE, privateDir, SERVER_FILES, stageGiven } from './node-certs';

/** A usage error (exit 2, src/cli-usage.ts): the flags about the link do not go together. */
export class LinkUsageError extends UsageError {}

type Values = Record<string, string | boolean | undefined>;
const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

/** How `node add` reaches the engine: the TLS folder to check it with, and what to do once it is added or refused. */
export interface Link {
  tls: boolean;
  certDir?: string;
  /** The material is the node's now (a staging folder renamed into DATA_DIR/nodes/<name>/). */
  commit(): void;
  /** The add was refused: given files staged are removed; certificates `--make-certs` made are kept for the rerun. */
  discard(): void;
  /** What to print when the engine did not answer (the steps on the node, after --make-certs). */
  hint: string;
}

/** The `node add` flags about the link, checked before anything is asked or written. */
export function prepareLink(dataDir: string, name: string, dockerHost: string, endpoint: EngineEndpoint, values: Values, out: (s: string) => void): Link {
  const given = { ca: str(values['tls-ca']), cert: str(values['tls-cert']), key: str(values['tls-key']) };
  const anyGiven = Object.values(given).some((v) => v !== undefined);
  const make = values['make-certs'] === true;
  const none: Link = { tls: false, commit: () => undefined, discard: () => undefined, hint: '' };
  if (!anyGiven && !make) {
    if (isInsecureLink(endpoint, false) && values.insecure !== true) {
      throw new LinkUsageError(
        `${dockerHost} is plain TCP off loopback: anyone who reaches that port is root on the node. Give --tls-ca, --tls-cert and --tls-key, or --make-certs (README "Nodes"), or --insecure to take that risk.`,
      );
    }
    return none;
  }
  if (values.insecure === true) throw new LinkUsageError('--insecure goes with a plain tcp:// engine, not with TLS.');
  if (!endpoint.host) throw new LinkUsageError('TLS needs a tcp://host:port engine (dockerd -H tcp://…:2376 --tlsverify).');
  const dir = nodeCertDir(dataDir, name);
  if (anyGiven) {
    if (make) throw new LinkUsageError('Give either --make-certs or --tls-ca, --tls-cert and --tls-key.');
    if (!given.ca || !given.cert || !given.key) throw new LinkUsageError('--tls-ca, --tls-cert and --tls-key go together.');
    for (const f of [given.ca, given.cert, given.key]) if (!fs.existsSync(f)) throw new LinkUsageError(`There is no file ${f}.`);
    const stage = stageGiven(path.dirname(dir), { ca: given.ca, cert: given.cert, key: given.key });
    return {
      tls: true,
      certDir: stage,
      commit() {
        fs.rmSync(dir, { recursive: true, force: true }); // what a removed node of the same name left
        fs.renameSync(stage, dir);
      },
      discard: () => fs.rmSync(stage, { recursive: true, force: true }),
      hint: '',
    };
  }
  const side = path.join(dir, NODE_SIDE);
  if (fs.existsSync(path.join(side, SERVER_FILES.cert)) && fs.existsSync(path.join(dir, TLS_FILES.key))) {
    if (!certNames(path.join(side, SERVER_FILES.cert), endpoint.host)) {
      throw new LinkUsageError(`The certificates made before in ${dir} are for another host than ${endpoint.host}; remove that folder to make new ones.`);
    }
    out(`Using the certificates made before in ${dir}.`);
  } else {
    makeNodeCerts(dir, name, endpoint.host);
    out(`Made a CA for node ${name}, its server certificate for ${endpoint.host} and this service's client certificate, in ${dir}.`);
  }
  return { tls: true, certDir: dir, commit: () => undefined, discard: () => undefined, hint: nodeSteps(side, endpoint, name) };
}

/** Exactly what goes on the node, and how its dockerd starts with it. */
function nodeSteps(side: string, endpoint: EngineEndpoint, name: string): string {
  const files = Object.values(SERVER_FILES).map((f) => path.join(side, f)).join(' ');
  return [
    `On node ${name}, as root:`,
    `  1. copy ${files} to /etc/docker/tls/ (keys mode 0600, owned by root);`,
    `  2. start dockerd with: --tlsverify --tlscacert=/etc/docker/tls/${SERVER_FILES.ca} --tlscert=/etc/docker/tls/${SERVER_FILES.cert} --tlskey=/etc/docker/tls/${SERVER_FILES.key} -H tcp://${endpoint.host ?? ''}:${endpoint.port ?? 2376} --live-restore`,
    `     (in docker.service's ExecStart or /etc/docker/daemon.json; --live-restore keeps games running when dockerd restarts);`,
    `  3. then delete ${side} here: the service needs only the client side.`,
  ].join('\n');
}

/** A link failure in the operator's words: the engine's certificate is not one the CA signed, or names another host. */
export function describeLinkError(err: Error): string {
  const code = (err as { code?: string }).code ?? '';
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_SIGNATURE_FAILURE/.test(code)) {
    return `the engine's certificate is not signed by the CA in ca.pem (${code}): wrong CA, or the node runs with other certificates`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the engine's certificate does not name this host (${err.message})`;
  if (code === 'CERT_HAS_EXPIRED') return 'the engine\'s certificate has expired';
  const alert = /alert ([a-z ]+)/.exec(err.message)?.[1];
  if (alert !== undefined || code === 'ECONNRESET') return `the engine refused this client certificate (TLS ${alert !== undefined ? `alert: ${alert}` : 'connection reset'})`;
  return err.message;
}

/** `gsh node certs rotate NAME [--server | --tls-ca F --tls-cert F --tls-key F]`: exit code as runNodeCli's. */
export async function rotate(
  dataDir: string,
  node: { name: string; dockerHost: string; tls: boolean } | undefined,
  endpoint: EngineEndpoint,
  values: Values,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  if (!node) return refuse(err, 'There is no such node.');
  if (!node.tls) return refuse(err, `Node ${node.name} is not reached over TLS; remove it and add it again with --make-certs or --tls-*.`);
  const dir = nodeCertDir(dataDir, node.name);
  if (values.server === true) {
    if (!fs.existsSync(path.join(dir, CA_KEY))) return refuse(err, `The CA of node ${node.name} is not kept here (its files were given): issue its server certificate with your CA.`);
    const side = issueServerSide(dir, endpoint.host ?? '');
    out(`Issued node ${node.name} a new server certificate from the same CA (${describeCert(path.join(side, SERVER_FILES.cert))}).`);
    out(nodeSteps(side, endpoint, node.name).replace('start dockerd with', 'restart dockerd (it reads its TLS files only at start) with'));
    out('This service trusts it at once (same CA); until the node restarts, it keeps using the old one.');
    return 0;
  }
  const given = { ca: str(values['tls-ca']), cert: str(values['tls-cert']), key: str(values['tls-key']) };
  let stage: string;
  if (given.ca || given.cert || given.key) {
    if (!given.ca || !given.cert || !given.key) throw new LinkUsageError('--tls-ca, --tls-cert and --tls-key go together.');
    stage = stageGiven(path.dirname(dir), { ca: given.ca, cert: given.cert, key: given.key });
  } else {
    if (!fs.existsSync(path.join(dir, CA_KEY))) return refuse(err, `The CA of node ${node.name} is not kept here (its files were given): give the new ones with --tls-ca, --tls-cert and --tls-key.`);
    privateDir(path.dirname(dir));
    stage = fs.mkdtempSync(path.join(path.dirname(dir), '.stage-'));
    fs.copyFileSync(path.join(dir, TLS_FILES.ca), path.join(stage, TLS_FILES.ca));
    issue(dir, 'client', endpoint.host ?? '', path.join(stage, TLS_FILES.key), path.join(stage, TLS_FILES.cert));
  }
  try {
    // The new material must work before it replaces the one in use: a failed rotation changes nothing.
    await createEngine(node.dockerHost, { certDir: stage }).json('GET', '/version', undefined, 5_000);
    installClientSide(stage, dir);
  } catch (e) {
    return refuse(err, `The engine of node ${node.name} did not take the new material (${describeLinkError(e as Error)}); the current one stays.`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
  out(`Node ${node.name}: new client certificate (${describeCert(path.join(dir, TLS_FILES.cert))}). New connections use it, open ones end with the old; no game stops.`);
  out('The old certificate stays valid on the node until it expires (dockerd reads no revocation list): if its key leaked, replace the CA (README "Nodes").');
  return 0;
}

function refuse(err: (s: string) => void, message: string): number {
  err(`gsh: ${message}`);
  return 1;
}
