/**
 * The runtime's background work (installs, commands on the servers' doors, archive deletions), tracked so that
 * `idle()` can wait for it: tests wait for work, never sleep on it (docs/conventions.md "Tests").
 */
export function createWork() {
  const work = new Set<Promise<unknown>>();
  return {
    /** Tracks a promise until it settles; its failure is the caller's to record (it is never thrown here). */
    track: (p: Promise<unknown>): void => {
      work.add(p);
      void p.finally(() => work.delete(p)).catch(() => undefined);
    },
    /** Resolves once nothing tracked before or while it waits is still under way. */
    idle: async (): Promise<void> => {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
  };
}

export type Work = ReturnType<typeof createWork>;
