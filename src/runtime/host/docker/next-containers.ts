// Each stopped server's next container, created ahead of its next start (docker-environment.ts uses it).
import type { Logger } from '../../../log';
import { removeContainer } from './container-process';
import type { Engine } from './engine';

/** How long a removal here may wait for its engine: a node away must not hold up a server's deletion. */
const REMOVE_TIMEOUT_MS = 5_000;

/** A next container: `held` when it was started ahead, its game waiting to be told to go (hold). */
export interface NextContainer {
  id: string;
  held: boolean;
}

interface Next {
  /** The container's id once created, null if the create failed (the next spawn creates one then). */
  made: Promise<(NextContainer & { config: string }) | null>;
}

/**
 * Creating a container is on the path of every start (about 10 ms of the engine's), so when a server's container
 * ends, the next one is created at once with the same definition, not started; a move starts one ahead on the new
 * node, its game held (hold). The next spawn takes it if its
 * definition (`config`, the whole create body as JSON: image, command, environment, plan limits, port, volume)
 * is still the same, else removes it and creates anew. Held in memory only: the service's next life removes
 * those it finds (docker-environment.ts start, which removes every container of this instance it does not hold).
 */
export function createNextContainers(engine: Engine, log: Logger) {
  const next = new Map<string, Next>();

  const remove = (serverId: string, id: string) =>
    removeContainer(engine, id, REMOVE_TIMEOUT_MS).catch((err: unknown) => {
      // start() of the service's next life removes it, as any container of this instance it does not hold.
      log.warn('could not remove a server\'s next container', { serverId, error: String(err) });
    });

  return {
    /** Creates the server's next container under `name` (its last one is already removed). Never rejects. */
    prepare(serverId: string, name: string, config: string): void {
      const made = engine.json<{ Id: string }>('POST', `/containers/create?name=${name}`, JSON.parse(config)).then(
        (c) => ({ id: c.Id, config, held: false }),
        () => null, // e.g. the old one could not be removed yet (409): the next spawn creates it, saying why
      );
      next.set(serverId, { made });
    },

    /**
     * Creates the server's next container under `name` from `body` (`config` and the hold: docker-environment.ts
     * prestart) and starts it, its game held until the spawn with `config` takes it; one it had is removed first.
     * Resolves once started, or given up (the spawn then creates one as usual). Never rejects.
     */
    hold(serverId: string, name: string, config: string, body: object): Promise<void> {
      const was = next.get(serverId)?.made;
      const made = (async () => {
        const old = await was;
        if (old) await remove(serverId, old.id);
        const id = await engine.json<{ Id: string }>('POST', `/containers/create?name=${name}`, body).then((c) => c.Id, () => null);
        if (id === null) return null;
        const started = await engine.json('POST', `/containers/${id}/start`).then(() => true, () => false);
        if (started) return { id, config, held: true };
        await remove(serverId, id);
        return null;
      })();
      next.set(serverId, { made });
      return made.then(() => undefined);
    },

    /** The next container if it was made with `config`; one made otherwise is removed. Never rejects. */
    async take(serverId: string, config: string): Promise<NextContainer | null> {
      const entry = next.get(serverId);
      next.delete(serverId);
      const made = await entry?.made;
      if (!made) return null;
      if (made.config === config) return { id: made.id, held: made.held };
      await remove(serverId, made.id); // its plan, port, command or image changed meanwhile
      return null;
    },

    /** Forgets the server's next container (killLeftover removed every container of the server). */
    forget(serverId: string): void {
      next.delete(serverId);
    },

    /** Removes the server's next container (its removal, or a move: it holds the server's volume). Never rejects. */
    async removeFor(serverId: string): Promise<void> {
      const entry = next.get(serverId);
      next.delete(serverId);
      const made = await entry?.made;
      if (made) await remove(serverId, made.id);
    },

    /** Removes every next container (shutdown). Never rejects. */
    async removeAll(): Promise<void> {
      const all = [...next];
      next.clear();
      await Promise.all(all.map(async ([serverId, entry]) => {
        const made = await entry.made;
        if (made) await remove(serverId, made.id);
      }));
    },
  };
}
