import fs from 'node:fs';
import type { SFTPWrapper } from 'ssh2';
import type { Actor } from '../actors';
import { serveFolders } from './session-folders';
import { serveReads } from './session-reads';
import { S, type Session, type SessionDeps } from './session-state';
import { serveWrites } from './session-writes';

export { apiPath, type SessionDeps } from './session-state';

/**
 * One SFTP session (draft-ietf-secsh-filexfer-02, version 3, as ssh2 parses it): each request is one call of the
 * files service (src/runtime/services/files.ts) on the session's one server, run as the session's actor, so the
 * checks, limits and activity records are the Files API's. `/` is the top of the server's files; `..` never goes
 * above it. A file opened for writing is staged on this host and uploaded whole when its handle closes (the API's
 * one way of writing, which puts a file in place at once, docs/architecture.md "SFTP"); writing at an offset of an
 * existing file (a resumed upload) starts the staging from its content, and the upload then asks for that same
 * content still to be there (If-Match with its etag), so a change made meanwhile is never overwritten.
 *
 * The requests are served by family, each from the session's state (session-state.ts): reads
 * (session-reads.ts), opening and writing files (session-writes.ts), folders (session-folders.ts), refusals (here).
 */
export function serveSftp(sftp: SFTPWrapper, serverId: string, actor: Actor, deps: SessionDeps): () => Promise<void> {
  const s: Session = { sftp, serverId, deps, handles: new Map(), opening: 0, next: 0, as: (fn) => deps.run(actor, fn) };
  serveReads(s);
  serveWrites(s);
  serveFolders(s);
  serveRefusals(s);
  return () => endSession(s);
}

/**
 * Refused cleanly (openapi/v1.yaml tag "SSH keys"): the service keeps the files' modes, owners and times itself,
 * and no link is ever made through it (docs/architecture.md "Server files").
 */
function serveRefusals({ sftp }: Session): void {
  sftp.on('SETSTAT', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Changing attributes (mode, owner, times) is not supported.'));
  sftp.on('FSETSTAT', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Changing attributes (mode, owner, times) is not supported.'));
  sftp.on('SYMLINK', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Symbolic links cannot be made.'));
  sftp.on('READLINK', (reqid) => sftp.status(reqid, S.OP_UNSUPPORTED, 'Links are shown, never followed.'));
  sftp.on('EXTENDED', (reqid) => sftp.status(reqid, S.OP_UNSUPPORTED, 'Not supported.'));
}

/** The session's end: streams closed, staged writes that were never closed dropped (nothing half written lands). */
async function endSession(s: Session): Promise<void> {
  for (const h of s.handles.values()) {
    if (h.kind === 'read') h.stream?.destroy();
    if (h.kind === 'write') {
      h.room.release();
      await h.writes.idle();
      await h.fd.close().catch(() => undefined);
      await fs.promises.rm(h.staging, { force: true });
    }
  }
  s.handles.clear();
}
