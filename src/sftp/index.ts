import crypto from 'node:crypto';
import path from 'node:path';
import type { Actors } from '../actors';
import type { Logger } from '../log';
import type { Files } from '../runtime/services/files';
import type { Store } from '../store';
import { loadHostKey } from './host-key';
import { createSftpServer, type SftpServer } from './server';

/** The largest file an SFTP session writes: the Files API's upload limit (src/runtime/compose.ts), 1 GiB. */
const MAX_FILE_BYTES = 1024 * 1024 * 1024;

/** The parts of a built service (src/service.ts buildService) the SFTP server uses. */
export interface SftpParts {
  store: Pick<Store, 'users' | 'tokens' | 'sshKeys' | 'members'>;
  files: Files;
  actors: Actors;
}

/**
 * The SFTP server over a built service, its host key loaded (or made) in `dataDir` (README "SFTP"). Not listening
 * yet: `listen` it. Tests build one the same way, on port 0.
 */
export function buildSftp(dataDir: string, parts: SftpParts, log: Logger, sweepMs?: number): { sftp: SftpServer; fingerprint: string } {
  const key = loadHostKey(dataDir);
  const blob = Buffer.from(key.publicKey.split(' ')[1] ?? '', 'base64');
  const fingerprint = `SHA256:${crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  const { users, tokens, sshKeys, members } = parts.store;
  if (!ssh2CryptoBinding()) {
    log.warn('ssh2 runs its ciphers through node:crypto: its own binding was not built for this Node; SFTP transfers take about twice as long (BENCHMARKS.md §13: run scripts/ssh2-binding.js with this Node)', { node: process.version });
  }
  const sftp = createSftpServer({
    hostKey: key.privateKey, users, tokens, sshKeys, members, files: parts.files, actors: parts.actors, log,
    stagingDir: path.join(dataDir, 'tmp', 'sftp'), maxBytes: MAX_FILE_BYTES, sweepMs,
  });
  return { sftp, fingerprint };
}

/**
 * Whether ssh2's optional crypto binding loaded (compiled for the project's Node by scripts/ssh2-binding.js at `npm
 * install`); without it ssh2 makes a node:crypto cipher for every packet. ssh2 says so in `bindingAvailable` of its
 * crypto module, which its typings leave out.
 */
function ssh2CryptoBinding(): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- ssh2's crypto module has no typings and no ES export
  return (require('ssh2/lib/protocol/crypto.js') as { bindingAvailable?: boolean }).bindingAvailable === true;
}
