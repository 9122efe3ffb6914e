// The certificates of a node's mutual-TLS link (Docker's --tlsverify; README "Nodes", docs/architecture.md "Nodes
// and placement"), made with the openssl command: node:crypto makes keys but cannot sign an X.509 certificate.
// What the service keeps for node N, in DATA_DIR/nodes/N/ (engine-tls.ts nodeCertDir), folder 0700, keys 0600:
//   ca.pem, cert.pem, key.pem   its client side, Docker's DOCKER_CERT_PATH names (the engine reads these)
//   ca-key.pem                  the CA's key, only when `--make-certs` made the CA (rotate issues from it)
//   node/                       the node's side (ca.pem, server-cert.pem, server-key.pem), for the operator to copy
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { TLS_FILES } from './runtime/host/docker/engine-tls';

/** Leaf certificates' lifetime: 825 days, the longest CA/Browser Forum Baseline Requirements allowed until 2020. */
const LEAF_DAYS = 825;
const CA_DAYS = 3650;
export const CA_KEY = 'ca-key.pem';
export const NODE_SIDE = 'node';
/** The node's side, as dockerd's --tlscacert, --tlscert and --tlskey take it. */
export const SERVER_FILES = { ca: 'ca.pem', cert: 'server-cert.pem', key: 'server-key.pem' } as const;

function openssl(args: string[]): string {
  try {
    return execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
  }
}

/** A new P-256 key in `file`, mode 0600 (RFC 5480 §2.1.1.1's secp256r1, which Docker's Go TLS stack takes). */
function newKey(file: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file]);
  fs.chmodSync(file, 0o600);
}

/** A folder only this user reads. */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}

/** A new CA (key and self-signed certificate, RFC 5280 §4.2.1.9 basicConstraints cA) in `dir`. */
export function makeCa(dir: string, node: string): void {
  newKey(path.join(dir, CA_KEY));
  openssl([
    'req', '-x509', '-new', '-key', path.join(dir, CA_KEY), '-sha256', '-days', String(CA_DAYS), '-subj', `/CN=gsh node CA ${node}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', path.join(dir, TLS_FILES.ca),
  ]);
}

/**
 * A key and a certificate signed by the CA in `caDir` (ca.pem, ca-key.pem): a server's names `host` in its
 * subjectAltName (an iPAddress for an IP, else a dNSName: RFC 5280 §4.2.1.6), what the client checks; a client's
 * says clientAuth, which dockerd's --tlsverify requires (RFC 5280 §4.2.1.12).
 */
export function issue(caDir: string, kind: 'server' | 'client', host: string, keyFile: string, certFile: string): void {
  const work = fs.mkdtempSync(path.join(caDir, '.issue-'));
  try {
    newKey(keyFile);
    const csr = path.join(work, 'req.csr');
    const ext = path.join(work, 'ext.cnf');
    openssl(['req', '-new', '-key', keyFile, '-subj', kind === 'server' ? `/CN=${host}` : '/CN=gsh control plane', '-out', csr]);
    const san = net.isIP(host) ? `IP:${host}` : `DNS:${host}`;
    fs.writeFileSync(ext, [
      'basicConstraints = critical,CA:FALSE',
      'keyUsage = critical,digitalSignature',
      `extendedKeyUsage = ${kind === 'server' ? 'serverAuth' : 'clientAuth'}`,
      ...(kind === 'server' ? [`subjectAltName = ${san}`] : []),
    ].join('\n') + '\n');
    const serial = crypto.randomBytes(16);
    serial[0] &= 0x7f; // positive, at most 20 octets (RFC 5280 §4.1.2.2)
    openssl([
      'x509', '-req', '-in', csr, '-CA', path.join(caDir, TLS_FILES.ca), '-CAkey', path.join(caDir, CA_KEY),
      '-set_serial', `0x${serial.toString('hex')}`, '-days', String(LEAF_DAYS), '-sha256', '-extfile', ext, '-out', certFile,
    ]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** A CA, the node's server certificate for `host` (in node/) and the service's client certificate, all in `dir`. */
export function makeNodeCerts(dir: string, node: string, host: string): void {
  privateDir(dir);
  makeCa(dir, node);
  issue(dir, 'client', host, path.join(dir, TLS_FILES.key), path.join(dir, TLS_FILES.cert));
  issueServerSide(dir, host);
}

/** The node's side in dir/node/: the CA certificate, and a new server key and certificate for `host`. */
export function issueServerSide(dir: string, host: string): string {
  const side = path.join(dir, NODE_SIDE);
  privateDir(side);
  fs.copyFileSync(path.join(dir, TLS_FILES.ca), path.join(side, SERVER_FILES.ca));
  issue(dir, 'server', host, path.join(side, SERVER_FILES.key), path.join(side, SERVER_FILES.cert));
  return side;
}

/** Whether the certificate in `file` names `host` (openssl x509 -checkip / -checkhost). */
export function certNames(file: string, host: string): boolean {
  const out = openssl(['x509', '-in', file, '-noout', net.isIP(host) ? '-checkip' : '-checkhost', host]);
  return / does match certificate/.test(out);
}

/** Subject, serial and end date of a certificate, for what the CLI prints. */
export function describeCert(file: string): string {
  const out = openssl(['x509', '-in', file, '-noout', '-serial', '-enddate']);
  const serial = /serial=(\w+)/.exec(out)?.[1] ?? '?';
  const end = /notAfter=(.+)/.exec(out)?.[1]?.trim() ?? '?';
  return `serial ${serial.slice(0, 16).toLowerCase()}…, valid until ${end}`;
}

/**
 * Puts the client-side files of `from` (ca.pem, cert.pem, key.pem) in `dir`, each through a temporary name and a
 * rename, key before certificate: a reader between the two sees a key that does not match and keeps its last good
 * set (engine-tls.ts), never a torn file.
 */
export function installClientSide(from: string, dir: string): void {
  privateDir(dir);
  for (const f of [TLS_FILES.ca, TLS_FILES.key, TLS_FILES.cert]) {
    const tmp = path.join(dir, `.${f}.new`);
    fs.copyFileSync(path.join(from, f), tmp);
    fs.chmodSync(tmp, f === TLS_FILES.key ? 0o600 : 0o644);
    fs.renameSync(tmp, path.join(dir, f));
  }
}

/** The operator's own files (`--tls-ca/--tls-cert/--tls-key`) copied into a staging folder under `parent`. */
export function stageGiven(parent: string, given: { ca: string; cert: string; key: string }): string {
  privateDir(parent);
  const stage = fs.mkdtempSync(path.join(parent, '.stage-'));
  fs.copyFileSync(given.ca, path.join(stage, TLS_FILES.ca));
  fs.copyFileSync(given.cert, path.join(stage, TLS_FILES.cert));
  fs.copyFileSync(given.key, path.join(stage, TLS_FILES.key));
  fs.chmodSync(path.join(stage, TLS_FILES.key), 0o600);
  return stage;
}
