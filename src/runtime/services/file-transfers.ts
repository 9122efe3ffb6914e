// How many transfers of a server's files one user may have under way at once (openapi/v1.yaml tag Files; README
// FILES_TRANSFERS_PER_USER; issue 40 §3): uploads, downloads, folder archives and extractions through the API and
// SFTP alike. Each holds a slot from its first byte to its last, so one account cannot tie up the disk and the
// event loop with transfers by the dozen; past the bound the next is 429 too_many_transfers with a Retry-After
// (RFC 9110 §10.2.3, RFC 6585 §4), and other accounts' transfers and calls go on as before.
import type { Readable } from 'node:stream';
import type { Actor } from '../../actors';
import { AppError } from '../../errors';
import { whileStreaming } from '../../gc-tuning';

/** Seconds a refused transfer is told to wait: transfers end in seconds to minutes, a retry soon is fine. */
const RETRY_AFTER_S = 2;

export function createTransfers(perUser: number) {
  const open = new Map<string, number>();

  /**
   * Takes one of the actor's slots (the service's own actors have no bound); the function gives it back, once. The
   * garbage collector is tuned for streaming meanwhile (gc-tuning.ts).
   */
  function take(actor: Actor): () => void {
    if (actor.type !== 'user') return whileStreaming();
    const user = actor.user_id;
    const held = open.get(user) ?? 0;
    if (held >= perUser) {
      throw new AppError('too_many_transfers', `At most ${perUser} uploads, downloads and extractions may be under way at once per user; wait for one to end.`, undefined, {
        'Retry-After': String(RETRY_AFTER_S),
      });
    }
    open.set(user, held + 1);
    const streamed = whileStreaming();
    let given = false;
    return () => {
      if (given) return;
      given = true;
      streamed();
      const left = (open.get(user) ?? 1) - 1;
      if (left > 0) open.set(user, left);
      else open.delete(user);
    };
  }

  return {
    take,
    /** Runs `work` holding a slot, given back when it settles. */
    async during<T>(actor: Actor, work: () => Promise<T>): Promise<T> {
      const give = take(actor);
      try {
        return await work();
      } finally {
        give();
      }
    },
    /** Holds a slot while `opened` is read: given back if opening fails, else when its stream closes (ended or not). */
    async reading<T extends { content: Readable }>(actor: Actor, opened: () => Promise<T>): Promise<T> {
      const give = take(actor);
      try {
        const result = await opened();
        result.content.once('close', give);
        if (result.content.destroyed) give();
        return result;
      } catch (err) {
        give();
        throw err;
      }
    },
    /** Slots the user holds (for tests). */
    held: (userId: string) => open.get(userId) ?? 0,
  };
}

export type Transfers = ReturnType<typeof createTransfers>;
