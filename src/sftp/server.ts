import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Server, type Connection } from 'ssh2';
import type { Actor, Actors } from '../actors';
import { newId } from '../ids';
import type { MembersRepo } from '../store/members-repo';
import type { SshKeysRepo } from '../store/ssh-keys-repo';
import type { TokensRepo } from '../store/tokens-repo';
import { checkLogin, type SftpAuthDeps, type SftpLogin } from './auth';
import { serveSftp, type SessionDeps } from './session';

/** Open sessions an account may hold at once (README "SFTP"); past it a login is refused. */
export const SFTP_SESSIONS_PER_USER = 8;
/** Failed login attempts a connection may make before it is closed (OpenSSH's MaxAuthTries). */
const MAX_AUTH_TRIES = 6;
/** How long a connection may take to log in (OpenSSH's LoginGraceTime is 120 s). */
const LOGIN_GRACE_MS = 30_000;

export interface SftpServerDeps extends SftpAuthDeps, Omit<SessionDeps, 'run'> {
  hostKey: string;
  actors: Pick<Actors, 'run'>;
  tokens: Pick<TokensRepo, 'authenticate' | 'activeIds'>;
  sshKeys: Pick<SshKeysRepo, 'find' | 'activeIds'>;
  members: Pick<MembersRepo, 'standing' | 'accept' | 'holding'>;
  /** How often open sessions are checked for authority lost (500 ms: a revocation ends them within a second). */
  sweepMs?: number;
}

interface Open {
  login: SftpLogin;
  client: Connection;
}

/** What the connections of one SFTP server share: its deps, its logged-in sessions, and the sweep over them. */
interface State {
  deps: SftpServerDeps;
  open: Set<Open>;
  sweeper: NodeJS.Timeout | null;
}

/**
 * The SFTP server (docs/architecture.md "SFTP"; openapi/v1.yaml tag "SSH keys"): ssh2's server side speaks SSH and
 * SFTP; this logs each connection in (auth.ts) and serves its one SFTP channel (session.ts) on one server's files.
 * While sessions are open, every `sweepMs` one query each finds those whose token was revoked or expired, whose key
 * was deleted, or whose account lost the `files` permission on the server (a member removed, the server deleted),
 * and ends them, as the event streams' sweep does (src/http/sse.ts).
 */
export function createSftpServer(deps: SftpServerDeps) {
  const state: State = { deps, open: new Set(), sweeper: null };
  const ssh = new Server({ hostKeys: [deps.hostKey], ident: 'gsh' }, (client) => accept(state, client));
  // Our own listener hands each socket to ssh2 (Server.injectSocket), so that shutdown can end every connection,
  // those not logged in yet too, instead of waiting for each to close (a peer may never close its side).
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    ssh.injectSocket(socket);
  });
  return {
    /** Listens on `port` (0: any free one) of `host`; resolves with the address once listening. */
    listen(port: number, host: string): Promise<AddressInfo> {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    /** Open sessions (for tests and the log). */
    sessions: () => state.open.size,
    /** Stops listening and ends every session (a staged write that was not closed is dropped). */
    close(): Promise<void> {
      if (state.sweeper) clearInterval(state.sweeper);
      state.sweeper = null;
      for (const o of state.open) o.client.end();
      state.open.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A second for the sessions' goodbyes to go out; then whatever is still connected is cut.
      const cut = setTimeout(() => sockets.forEach((socket) => socket.destroy()), 1000);
      return closed.finally(() => clearTimeout(cut));
    },
  };
}

/**
 * A new connection: logged in (auth.ts) within the grace time, in at most MAX_AUTH_TRIES attempts and while its
 * account holds fewer than SFTP_SESSIONS_PER_USER sessions; then served.
 */
function accept(state: State, client: Connection): void {
  let login: SftpLogin | undefined;
  let failures = 0;
  const grace = setTimeout(() => client.end(), LOGIN_GRACE_MS).unref();
  client.on('error', () => undefined);
  client.on('authentication', (ctx) => {
    const result = ctx.method === 'none' ? undefined : checkLogin(state.deps, ctx);
    if (result === 'query') { ctx.accept(); return; }
    const held = result ? [...state.open].filter((o) => o.login.userId === result.userId).length : 0;
    if (!result || held >= SFTP_SESSIONS_PER_USER) {
      if (ctx.method !== 'none' && ++failures >= MAX_AUTH_TRIES) return void client.end();
      ctx.reject(['publickey', 'password']);
      return;
    }
    login = result;
    ctx.accept();
  });
  client.on('ready', () => {
    clearTimeout(grace);
    // ssh2 emits 'ready' only after an accepted login, which set `login`.
    if (!login) throw new Error('an SFTP connection was ready before it logged in');
    serve(state, client, login);
  });
  client.on('close', () => clearTimeout(grace));
}

/** A logged-in connection: one SFTP channel, run as its actor, and nothing else; swept while open. */
function serve(state: State, client: Connection, login: SftpLogin): void {
  const { deps, open } = state;
  const entry: Open = { login, client };
  open.add(entry);
  state.sweeper ??= setInterval(() => sweep(state), deps.sweepMs ?? 500).unref();
  let sftpStarted = false;
  const sessionId = newId('sfs');
  const actor: Actor = { type: 'user', user_id: login.userId, token_id: login.tokenId, sftp: { session_id: sessionId, ssh_key_id: login.keyId } };
  const ends: Array<() => Promise<void>> = [];
  client.on('session', (acceptSession) => {
    const session = acceptSession();
    session.on('sftp', (acceptSftp, rejectSftp) => {
      // One SFTP channel per connection: what one login opened, it serves.
      if (sftpStarted) { rejectSftp(); return; }
      sftpStarted = true;
      const channel = acceptSftp();
      ends.push(serveSftp(channel, login.serverId, actor, { ...deps, run: deps.actors.run }));
      // The client's EOF ends the channel (RFC 4254 §5.3), and with it the connection: it served this one.
      channel.on('end', () => channel.end());
      channel.on('close', () => client.end());
    });
    // No shell, no commands, no forwarding: this server only serves files. ssh2 passes no `reject` when the client
    // asked for no reply (ssh2's lib/server.js), though @types/ssh2 types it as always there.
    const refuse = (_a: unknown, reject?: () => void) => reject?.();
    session.on('shell', refuse);
    session.on('exec', refuse);
    session.on('pty', refuse);
    session.on('subsystem', refuse);
  });
  client.on('tcpip', (_a, reject) => reject());
  client.on('close', () => {
    open.delete(entry);
    if (open.size === 0 && state.sweeper) {
      clearInterval(state.sweeper);
      state.sweeper = null;
    }
    for (const end of ends) void end().catch((err: unknown) => deps.log.warn('an SFTP session ended uncleanly', { error: String(err) }));
  });
}

/** Ends the sessions whose token, key or standing on their server no longer holds. */
function sweep({ deps, open }: State): void {
  const all = [...open];
  const tokens = deps.tokens.activeIds([...new Set(all.flatMap((o) => (o.login.tokenId ? [o.login.tokenId] : [])))]);
  const keys = deps.sshKeys.activeIds([...new Set(all.flatMap((o) => (o.login.keyId ? [o.login.keyId] : [])))]);
  const key = (o: Open) => JSON.stringify([o.login.userId, o.login.serverId, 'files']);
  const holding = deps.members.holding([...new Set(all.map(key))].map((k) => JSON.parse(k) as [string, string, string]));
  for (const o of all) {
    const credential = o.login.tokenId ? tokens.has(o.login.tokenId) : o.login.keyId !== null && keys.has(o.login.keyId);
    if (!credential || !holding.has(key(o))) {
      open.delete(o);
      o.client.end();
    }
  }
}

export type SftpServer = ReturnType<typeof createSftpServer>;
