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
  const sftp = createSftpServer({
    hostKey: key.privateKey, users, tokens, sshKeys, members, files: parts.files, actors: parts.actors, log,
    stagingDir: path.join(dataDir, 'tmp', 'sftp'), maxBytes: MAX_FILE_BYTES, sweepMs,
  });
  return { sftp, fingerprint };
}
