import { AppError } from '../errors';
import type { FileEntry } from '../runtime/host/storage';
import { S, answer, apiPath, attrsOf, handleOf, openHandle, opening, type Session } from './session-state';

/** Listing folders (OPENDIR, READDIR) and changing the tree (MKDIR, RMDIR, REMOVE, RENAME). */
export function serveFolders(s: Session): void {
  const { sftp, serverId } = s;
  const files = s.deps.files;
  sftp.on('OPENDIR', (reqid, p) => void answer(s, reqid, async () => {
    const entry = await opening(s, () => s.as(() => files.stat(serverId, apiPath(p))));
    if (entry.type !== 'directory') throw new AppError('file_conflict', `${p} is not a folder.`);
    sftp.handle(reqid, openHandle(s, { kind: 'dir', path: entry.path, cursor: null, done: false }));
  }));
  sftp.on('READDIR', (reqid, buf) => void answer(s, reqid, async () => {
    const h = handleOf(s, buf);
    if (h?.kind !== 'dir') { sftp.status(reqid, S.FAILURE, 'Not a folder handle.'); return; }
    if (h.done) { sftp.status(reqid, S.EOF); return; }
    const page = await s.as(() => files.list(serverId, h.path, 100, h.cursor ?? undefined));
    h.cursor = page.next_cursor;
    h.done = !page.has_more;
    if (page.data.length === 0) { sftp.status(reqid, S.EOF); return; }
    sftp.name(reqid, page.data.map((e) => ({ filename: e.name, longname: longname(e), attrs: attrsOf(e) })));
  }));
  sftp.on('MKDIR', (reqid, p) => void answer(s, reqid, async () => {
    await s.as(() => files.mkdir(serverId, apiPath(p)));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('RMDIR', (reqid, p) => void answer(s, reqid, async () => {
    const entry = await s.as(() => files.stat(serverId, apiPath(p)));
    if (entry.type !== 'directory') throw new AppError('file_conflict', `${p} is not a folder.`);
    await s.as(() => files.remove(serverId, entry.path, false));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('REMOVE', (reqid, p) => void answer(s, reqid, async () => {
    const entry = await s.as(() => files.stat(serverId, apiPath(p)));
    if (entry.type === 'directory') throw new AppError('file_conflict', `${p} is a folder; remove it with rmdir.`);
    await s.as(() => files.remove(serverId, entry.path, false));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('RENAME', (reqid, from, to) => void answer(s, reqid, async () => {
    await s.as(() => files.move(serverId, apiPath(from), apiPath(to)));
    sftp.status(reqid, S.OK);
  }));
}

/** `ls -l`'s line, which OpenSSH's `ls -l` prints as it is (draft-ietf-secsh-filexfer-02 §7). */
function longname(e: FileEntry): string {
  const kind = e.type === 'directory' ? 'drwxr-xr-x' : e.type === 'symlink' ? 'lrwxrwxrwx' : '-rw-r--r--';
  const d = new Date(e.modified_at);
  const when = `${d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${String(d.getUTCDate()).padStart(2)} ${d.getUTCFullYear()}`;
  return `${kind}    1 game     game     ${String(e.size).padStart(8)} ${when} ${e.name}`;
}
