import { AppError } from '../../errors';
import type { SshKeysRepo } from '../../store/ssh-keys-repo';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';

/**
 * SSH keys tag (openapi/v1.yaml): listSshKeys, createSshKey, getSshKey, deleteSshKey: the keys that log in to SFTP
 * as their account (src/sftp/auth.ts). Only the account's own; another's answers 404 like a missing one. Deleting a
 * key ends its SFTP sessions at the next sweep (src/sftp/server.ts, within a second).
 */
export function sshKeyHandlers(deps: { sshKeys: SshKeysRepo }): Handlers {
  const { sshKeys } = deps;
  const missing = (id: string) => new AppError('ssh_key_not_found', `There is no SSH key ${id}.`);
  return {
    listSshKeys: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      return { status: 200, body: withCursor(sshKeys.list(principal.userId, limit, startingAfter)) };
    },
    createSshKey: ({ principal, body }) => {
      const key = sshKeys.create(principal.userId, body.public_key, body.name);
      return { status: 201, body: key, headers: { Location: `/v1/ssh-keys/${key.id}` } };
    },
    getSshKey: ({ principal, path }) => {
      const key = sshKeys.get(principal.userId, path.ssh_key_id);
      if (!key) throw missing(path.ssh_key_id);
      return { status: 200, body: key };
    },
    deleteSshKey: ({ principal, path }) => {
      if (!sshKeys.delete(principal.userId, path.ssh_key_id)) throw missing(path.ssh_key_id);
      return { status: 204, body: undefined };
    },
  };
}
