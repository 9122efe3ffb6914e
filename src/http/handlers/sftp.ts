import { AppError } from '../../errors';
import type { UsersRepo } from '../../store/users-repo';
import type { Handlers } from '../types';

/**
 * getServerSftp (openapi/v1.yaml tag Files): where and as whom an SFTP client reaches a server's files (src/sftp/).
 * The access check has already required the `files` permission (x-permission), the one the SFTP login asks too
 * (src/sftp/auth.ts). The host is PUBLIC_URL's: the SFTP server listens beside the API (README "SFTP"), and
 * GAME_HOST names where games are played, which may be another machine.
 */
export function sftpHandlers(deps: { users: Pick<UsersRepo, 'findById'>; publicUrl: string; sftpPort: number | null }): Handlers {
  const { users, sftpPort } = deps;
  // URL.hostname keeps an IPv6 literal's brackets: the `host` field has none, the command line needs them.
  const hostname = new URL(deps.publicUrl).hostname;
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    getServerSftp: ({ server, principal }) => {
      if (sftpPort === null) throw new AppError('sftp_disabled', 'This service runs no SFTP server (its operator set SFTP_PORT=off); use the Files API instead.');
      const email = users.findById(principal.userId)?.email ?? '';
      // src/sftp/auth.ts parseUsername: the server's id, a dot, the account's email.
      const username = `${server.id}.${email}`;
      return { status: 200, body: { host, port: sftpPort, username, command: `sftp -P ${sftpPort} ${username}@${hostname}` } };
    },
  };
}
