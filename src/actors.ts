import { AsyncLocalStorage } from 'node:async_hooks';
import type { components } from '../generated/v1';

/** Who did something (openapi/v1.yaml Actor): an account with the token it used, or the service itself. */
// The spec's Actor but OtherActor, the branch for kinds a later version adds (x-open-enum): this service's own two.
export type Actor = UserActor | components['schemas']['ServiceActor'];
export type ServiceCause = components['schemas']['ServiceCause'];
export type UserActor = components['schemas']['UserActor'];

export function userActor(userId: string, tokenId: string | null): UserActor {
  return { type: 'user', user_id: userId, token_id: tokenId };
}

export function serviceActor(cause: ServiceCause, scheduleId: string | null = null): Actor {
  return { type: 'service', cause, schedule_id: scheduleId };
}

/** What the game does on its own: an exit nobody asked for, players joining and leaving. */
export const GAME_ACTOR: Actor = serviceActor('game');

/**
 * Whom the work under way acts for (docs/architecture.md "Who did it"). Events are raised in one place
 * (src/store/events-repo.ts), which attaches `current()`; so the actor is set where work enters the service, not
 * passed through every layer: the dispatcher runs each request as its caller, a door runs each command as whoever
 * submitted it, and the service's own loops (reconcile, the disk watcher, schedules, …) run as themselves. Node's
 * AsyncLocalStorage carries it through awaits and timers, as it does the request id (src/log.ts).
 *
 * One per service (and one per CLI process), never module state: `fallback` is what is current outside any run,
 * the service's `unknown` (a path not yet given an actor shows as such, and a test looks for none) or the CLI's
 * `operator`.
 */
export function createActors(fallback: Actor) {
  const storage = new AsyncLocalStorage<Actor>();
  return {
    current: (): Actor => storage.getStore() ?? fallback,
    /** Runs `fn` (and everything it starts) as `actor`. */
    run<T>(actor: Actor, fn: () => T): T {
      return storage.run(actor, fn);
    },
    /**
     * Releases the storage when its service ends (AsyncLocalStorage.disable). Node 20 keeps every storage that has
     * run in one list for the whole process and walks it for each promise created, so one left behind by every
     * service that ended would make every later promise dearer (a test process builds hundreds of services). A
     * `run` after this takes the storage up again.
     */
    close(): void {
      storage.disable();
    },
  };
}

export type Actors = ReturnType<typeof createActors>;

/**
 * The actor as `viewer` sees it: a token id is shown only to the account it belongs to (openapi/v1.yaml
 * UserActor.token_id), so a member never learns the owner's token ids, nor the owner a member's.
 */
export function actorFor(actor: Actor, viewer: string): Actor {
  if (actor.type !== 'user' || actor.user_id === viewer) return actor;
  const sftp = actor.sftp && { ...actor.sftp, ssh_key_id: null };
  return actor.token_id !== null || actor.sftp?.ssh_key_id ? { ...actor, token_id: null, ...(sftp && { sftp }) } : actor;
}
