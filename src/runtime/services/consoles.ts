import { AppError } from '../../errors';
import type { MemberPermission } from '../../store/server-view';
import { checkCommandPermissions } from '../software/command-permissions';
import type { ConsoleLine, ConsoleListener } from '../server/console-buffer';
import { isCommandLine } from '../software/console-text';
import type { Doors } from '../server/doors';
import type { PowerService } from './power';
import type { Player } from '../server/game';
import type { Players } from '../server/probes';
import { isStopCommand } from '../software/software-catalog';
import type { CommandSender } from '../server/types';

/** What a kicked player is told when the caller gives no reason (the spec's KickReason). */
export const DEFAULT_KICK_REASON = 'Kicked from the server.';

/**
 * The servers' consoles and who is online (docs/architecture.md "Streams"): lines read from each server's ring
 * buffer, commands written to its running game, players as the game reports them. Each method takes a server id
 * its caller has checked is the caller's.
 */
export function createConsoles(deps: {
  doors: Pick<Doors, 'of'>;
  power: Pick<PowerService, 'requestAction'>;
  /** The server's owner: a stop command the service itself sends (a schedule's) is a stop action recorded for them. */
  ownerOf: (serverId: string) => string | undefined;
  now: () => number;
}) {
  const { doors } = deps;
  return {
    /** The newest `limit` lines (default 100), oldest first. */
    recent: (serverId: string, limit = 100): ConsoleLine[] => doors.of(serverId).console.recent(limit),
    /** Live lines; with afterSeq, first the buffered lines after it. Returns the unsubscribe function. */
    subscribe: (serverId: string, fn: ConsoleListener, opts: { afterSeq?: number } = {}): (() => void) =>
      doors.of(serverId).console.subscribe(fn, opts.afterSeq),
    /** Whether every line after `afterSeq` is still buffered (ConsoleBuffer.holdsAllAfter). */
    holdsAllAfter: (serverId: string, afterSeq: number): boolean => doors.of(serverId).console.holdsAllAfter(afterSeq),

    /**
     * Writes one console line to the game; invalid_state unless it is running, validation_failed unless it is one
     * line of text. Echoed as an `input` line that records its sender (an account and its token, or a schedule).
     * The software's stop command is a stop action by the sender instead (refused like one: action_conflict while
     * another action holds the server). With `held`, the sender's permissions on the server (Server.access), a
     * command that needs one they lack (command-permissions.ts: `stop` needs `power`, `op` needs `players`) is
     * refused with missing_permission before anything reaches the game.
     */
    sendCommand(serverId: string, text: string, sender: CommandSender, held?: readonly MemberPermission[]): ConsoleLine {
      const door = doors.of(serverId);
      const game = door.running('commands need it running');
      // The spec refuses these before a handler runs; checked again for the runtime's other callers.
      if (!isCommandLine(text)) {
        const detail = 'must be one non-empty line of text, without control characters';
        throw new AppError('validation_failed', `A command ${detail}.`, [{ pointer: '/command', detail }]);
      }
      if (held) checkCommandPermissions(game.def, text, held);
      if (isStopCommand(game.def, text)) {
        // The game would exit on it as on a crash (and be restarted): it is this user's stop action instead, so
        // desired state becomes `stopped` with the action and the exit is expected. The action sends the stop.
        deps.power.requestAction(serverId, sender.type === 'user' ? sender.user_id : (deps.ownerOf(serverId) ?? ''), 'stop');
        return door.console.push('input', text, sender);
      }
      const line = door.console.push('input', text, sender);
      game.send(text);
      return line;
    },

    /**
     * Disconnects a player the game reports online (kickServerPlayer), telling them `reason`: invalid_state unless
     * the game runs and its software can kick, player_not_online unless `who` is in the game's last report
     * (Game.online): a name (in any case) or `{ uuid }` (in any case; for a name the API cannot take, such as a
     * Luanti name with a dash). Echoed as an `input` line naming its sender; the player's leaving
     * is reported with reason `kick`. Synchronous, so that it runs inside an Idempotency-Key's transaction.
     */
    kick(serverId: string, who: string | { uuid: string }, reason: string | undefined, sender: CommandSender): { player: Player; reason: string } {
      const door = doors.of(serverId);
      const game = door.running('a player can be kicked only while it runs');
      if (game.def.kickCommand === null) throw new AppError('invalid_state', `${game.def.id} cannot kick a player.`);
      const player = typeof who === 'string'
        ? game.online().find((p) => p.name.toLowerCase() === who.toLowerCase())
        : game.online().find((p) => p.uuid.toLowerCase() === who.uuid.toLowerCase());
      const named = typeof who === 'string' ? `named ${who}` : `with the UUID ${who.uuid}`;
      if (!player) throw new AppError('player_not_online', `No player ${named} is online on this server.`);
      const told = reason ?? DEFAULT_KICK_REASON;
      door.console.push('input', game.kick(player, told, sender), sender);
      return { player, reason: told };
    },

    /** The name of the player online with this UUID (any case), for a list entry by UUID; else player_not_online. */
    nameOf(serverId: string, uuid: string): string {
      const game = doors.of(serverId).running('a player is known by UUID only while it runs');
      const player = game.online().find((p) => p.uuid.toLowerCase() === uuid.toLowerCase());
      if (!player) throw new AppError('player_not_online', `No player with the UUID ${uuid} is online on this server.`);
      return player.name;
    },

    /** Who is online, from the game itself; invalid_state unless it is running or if the game cannot tell. */
    players: async (serverId: string): Promise<Players> => doors.of(serverId).running('players are known only while it runs').players(deps.now()),
  };
}

export type Consoles = ReturnType<typeof createConsoles>;
