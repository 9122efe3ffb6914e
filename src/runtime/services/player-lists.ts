import { AppError } from '../../errors';
import type { components } from '../../../generated/v1';
import type { ServersRepo } from '../../store/servers-repo';
import type { ListEntry, PlayerListsRepo } from '../../store/player-lists-repo';
import type { ListCommands, ListName } from '../software/player-list-definitions';
import type { Doors } from '../server/doors';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { CommandSender } from '../server/types';

/** A list as the API shows it (the spec's PlayerList). */
export type PlayerList = components['schemas']['PlayerList'];

export interface PlayerListsDeps {
  repo: PlayerListsRepo;
  servers: Pick<ServersRepo, 'find'>;
  catalog: SoftwareCatalog;
  /** The servers' doors: a change reaches a running game through its console. */
  doors: Pick<Doors, 'of'>;
}

/**
 * The one owner of a server's player lists (docs/architecture.md "Player lists"): stored per server, applied through
 * the game's console while it runs, and written into the definition's file before every launch (launch-files.ts),
 * so the next start has them. not_found for a list the server's software does not declare; invalid_state while it is being deleted.
 */
export function createPlayerLists(deps: PlayerListsDeps) {
  function commands(serverId: string, list: ListName): ListCommands {
    const server = deps.servers.find(serverId);
    if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
    const def = deps.catalog.get(server.software);
    const found = def.playerLists?.lists[list];
    if (!found) throw new AppError('not_found', `${def.id} has no ${list} list.`);
    return found;
  }

  /** Checks the list and the server's state; then, once stored, sends the command if the game runs. */
  function change(serverId: string, list: ListName, sender: CommandSender, write: (c: ListCommands) => string | null) {
    const c = commands(serverId, list);
    const slot = deps.doors.of(serverId);
    if (slot.state === 'deleting') throw new AppError('invalid_state', 'The server is being deleted.');
    const command = write(c);
    if (command === null || slot.state !== 'running') return; // the next launch's file carries it
    slot.console.push('input', command, sender);
    slot.running('lists are applied live only while it runs').send(command);
  }

  const read = (serverId: string, list: ListName): PlayerList => {
    const c = commands(serverId, list);
    return { enabled: c.on ? deps.repo.enabled(serverId, list) : null, data: deps.repo.entries(serverId, list) };
  };

  return {
    read,
    /** Puts a name on the list (idempotent: a name already there, whatever its case, is answered as it is). */
    add(serverId: string, list: ListName, name: string, sender: CommandSender): ListEntry {
      let entry: ListEntry | undefined;
      change(serverId, list, sender, (c) => {
        const result = deps.repo.add(serverId, list, name);
        entry = result.entry;
        return result.added ? c.add.replace('{name}', name) : null;
      });
      if (!entry) throw new Error('change() returned without calling write'); // it calls write or throws
      return entry;
    },
    /** Takes a name off the list; not_found if it is not on it. */
    remove(serverId: string, list: ListName, name: string, sender: CommandSender): void {
      change(serverId, list, sender, (c) => {
        if (!deps.repo.remove(serverId, list, name)) throw new AppError('not_found', `${name} is not on the ${list}.`);
        return c.remove.replace('{name}', name);
      });
    },
    /** Turns a list with a switch (the whitelist) on or off; validation_failed for a list without one. */
    setEnabled(serverId: string, list: ListName, enabled: boolean, sender: CommandSender): PlayerList {
      change(serverId, list, sender, (c) => {
        if (!c.on || !c.off) {
          const detail = `the ${list} has no on/off switch`;
          throw new AppError('validation_failed', `The ${list} cannot be turned on or off.`, [{ pointer: '/body/enabled', detail }]);
        }
        deps.repo.setEnabled(serverId, list, enabled);
        return enabled ? c.on : c.off;
      });
      return read(serverId, list);
    },
  };
}

export type PlayerListsService = ReturnType<typeof createPlayerLists>;
