// The client side of Docker's `--tlsverify` (README "Nodes"; docs/architecture.md "Nodes and placement"): a folder
// laid out as Docker's own DOCKER_CERT_PATH, ca.pem (the CA the node's server certificate must chain to), cert.pem
// and key.pem (this service's client certificate and key). Read again whenever a file changes, so a rotation
// (`gsh node certs rotate`) reaches new connections of a running service without a restart.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

/** Docker's file names in a DOCKER_CERT_PATH folder. */
export const TLS_FILES = { ca: 'ca.pem', cert: 'cert.pem', key: 'key.pem' } as const;

/** What every TLS connection to one engine is made with (node:tls connect options). */
export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** SNI: a host name, never an IP address (RFC 6066 §3 allows only host names). */
  servername: string;
  /** The server's certificate must name `host` in its subjectAltName (RFC 6125 §6; an IP as an iPAddress entry). */
  checkServerIdentity: (name: string, cert: tls.PeerCertificate) => Error | undefined;
}

/**
 * The material in `certDir` for connections to `host`, read on first use and again when any file's size or time
 * changes. A half-written rotation (a new certificate beside the old key) fails tls.createSecureContext and keeps
 * the last good set; with none yet, it throws, so the engine's call fails rather than going out in the clear.
 */
export function tlsMaterial(certDir: string, host: string): () => TlsMaterial {
  let stamp = '';
  let last: TlsMaterial | undefined;
  const files = Object.values(TLS_FILES).map((f) => path.join(certDir, f));
  return () => {
    const now = files.map((f) => statStamp(f)).join('|');
    if (now === stamp && last) return last;
    try {
      const [ca, cert, key] = files.map((f) => fs.readFileSync(f));
      tls.createSecureContext({ ca, cert, key });
      last = {
        ca, cert, key,
        servername: net.isIP(host) ? '' : host,
        checkServerIdentity: (_name, peer) => tls.checkServerIdentity(host, peer),
      };
      stamp = now;
    } catch (err) {
      if (!last) throw new Error(`the TLS material in ${certDir} cannot be used: ${(err as Error).message}`, { cause: err });
    }
    return last;
  };
}

function statStamp(file: string): string {
  try {
    const s = fs.statSync(file);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return 'missing';
  }
}

/**
 * Where a node's client-side material lives: DATA_DIR/nodes/<name>/ (Docker's names above, keys mode 0600; with
 * `--make-certs` also the CA's key, ca-key.pem, and the node's side in node/ until the operator has copied it).
 */
export function nodeCertDir(dataDir: string, node: string): string {
  return path.join(dataDir, 'nodes', node);
}

/**
 * True for a link anyone on the network between could use: a plain tcp:// engine (parseDockerHost's host) on an address other than
 * loopback (127.0.0.0/8, ::1, localhost). An engine's API is root on its machine (SECURITY.md), so `gsh node add`
 * refuses one without --insecure and the service warns of each at every start (select-environment.ts).
 */
export function isInsecureLink(endpoint: { host?: string }, tlsOn: boolean): boolean {
  const host = endpoint.host?.toLowerCase();
  if (host === undefined || tlsOn) return false;
  return !(host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.')));
}
