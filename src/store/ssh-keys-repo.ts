import crypto from 'node:crypto';
import { utils } from 'ssh2';
import type { components } from '../../generated/v1';
import { iso, type Clock } from '../clock';
import { AppError, quotaExceeded } from '../errors';
import { newId } from '../ids';
import { required, type Db } from './db';

export type SshKey = components['schemas']['SshKey'];
/** Keys an account may hold (openapi/v1.yaml createSshKey). */
export const SSH_KEYS_PER_USER = 20;

interface Row {
  id: string;
  user_id: string;
  name: string;
  type: string;
  blob: string;
  fingerprint: string;
  created_at: string;
  last_used_at: string | null;
}

const toKey = (r: Row): SshKey => ({
  id: r.id, name: r.name, type: r.type, fingerprint: r.fingerprint, public_key: `${r.type} ${r.blob}`, created_at: r.created_at, last_used_at: r.last_used_at,
});

/** Key algorithms a key may have: RFC 8709 (Ed25519), RFC 5656 (ECDSA), RFC 8332 (RSA; at least 2048 bits). */
const TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'];

/**
 * A key line (`type base64 comment`, OpenSSH's authorized_keys format), checked by ssh2's parser: its type, its SSH
 * wire blob, its OpenSSH fingerprint (SHA256 of the blob, base64 without padding) and its comment.
 */
export function parsePublicKey(line: string): { type: string; blob: string; fingerprint: string; comment: string } {
  const bad = (detail: string) => new AppError('validation_failed', detail, [{ pointer: '/body/public_key', detail }]);
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2 || !TYPES.includes(parts[0])) throw bad(`Send one key line such as "ssh-ed25519 AAAA… comment"; the type must be one of ${TYPES.join(', ')}.`);
  const parsed = utils.parseKey(`${parts[0]} ${parts[1]}`);
  if (parsed instanceof Error || Array.isArray(parsed) || parsed.isPrivateKey() || parsed.type !== parts[0]) throw bad('The key cannot be read as an SSH public key.');
  const blob = parsed.getPublicSSH();
  if (parts[0] === 'ssh-rsa') {
    const bits = crypto.createPublicKey(parsed.getPublicPEM()).asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw bad(`An RSA key needs at least 2048 bits; this one has ${bits}.`);
  }
  const fingerprint = `SHA256:${crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  return { type: parts[0], blob: blob.toString('base64'), fingerprint, comment: parts.slice(2).join(' ') };
}

/**
 * `ssh_keys` (migration 036), its one writer: the SSH public keys that log in to SFTP as their account (openapi/v1.yaml
 * tag "SSH keys"; docs/architecture.md "SFTP"). Every read takes the owner's id.
 */
export function createSshKeysRepo(db: Db, clock: Clock) {
  const insert = db.prepare(`INSERT INTO ssh_keys (id, user_id, name, type, blob, fingerprint, created_at)
    VALUES (@id, @user_id, @name, @type, @blob, @fingerprint, @created_at)`);
  const count = db.prepare<unknown[], number>('SELECT COUNT(*) FROM ssh_keys WHERE user_id = ?').pluck();
  const byBlob = db.prepare<unknown[], Row>('SELECT * FROM ssh_keys WHERE user_id = ? AND blob = ?');
  const one = db.prepare<unknown[], Row>('SELECT * FROM ssh_keys WHERE id = ? AND user_id = ?');
  const page = db.prepare<unknown[], Row>('SELECT * FROM ssh_keys WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?');
  const remove = db.prepare('DELETE FROM ssh_keys WHERE id = ? AND user_id = ?');
  const touch = db.prepare('UPDATE ssh_keys SET last_used_at = ? WHERE id = ?');
  const active = db.prepare<unknown[], string>('SELECT id FROM ssh_keys WHERE id IN (SELECT value FROM json_each(?))').pluck();

  return {
    /** Registers a key line for the user; 409 ssh_key_exists for a key it holds already, 403 quota_exceeded past SSH_KEYS_PER_USER. */
    create(userId: string, line: string, name: string | undefined): SshKey {
      const key = parsePublicKey(line);
      return db.transaction(() => {
        const used = required(count.get(userId));
        if (used >= SSH_KEYS_PER_USER) throw quotaExceeded('ssh_keys', SSH_KEYS_PER_USER, used, `An account may hold ${SSH_KEYS_PER_USER} SSH keys and yours holds ${used}; delete one first.`);
        if (byBlob.get(userId, key.blob)) {
          throw new AppError('ssh_key_exists', 'This key is registered on your account already; GET /v1/ssh-keys lists your keys.');
        }
        const now = clock.now();
        const row: Row = {
          id: newId('key', now), user_id: userId, name: (name ?? key.comment).slice(0, 64) || key.type, type: key.type, blob: key.blob,
          fingerprint: key.fingerprint, created_at: iso(now), last_used_at: null,
        };
        insert.run(row);
        return toKey(row);
      }).immediate();
    },
    list(userId: string, limit: number, after = ''): { data: SshKey[]; has_more: boolean } {
      const rows = page.all(userId, after, limit + 1);
      return { data: rows.slice(0, limit).map(toKey), has_more: rows.length > limit };
    },
    get(userId: string, id: string): SshKey | undefined {
      const row = one.get(id, userId);
      return row && toKey(row);
    },
    delete: (userId: string, id: string): boolean => remove.run(id, userId).changes > 0,
    /** The user's key with this SSH wire blob (base64), for a login; records the use when `used`. */
    find(userId: string, blob: string, used: boolean): SshKey | undefined {
      const row = byBlob.get(userId, blob);
      if (row && used) touch.run(iso(clock.now()), row.id);
      return row && toKey(row);
    },
    /** The ids among these that still exist (one query, for the sweep of open SFTP sessions). */
    activeIds: (ids: string[]): Set<string> => new Set(active.all(JSON.stringify(ids))),
  };
}

export type SshKeysRepo = ReturnType<typeof createSshKeysRepo>;
