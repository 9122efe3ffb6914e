/**
 * What the HTTP layer asks of the runtime (src/runtime/runtime.ts implements it). Kept as an interface so the
 * handlers' dependencies are visible in one place.
 */
export interface ServerRuntime {
  /** Prepares a new server's files in the background; the server moves installing → stopped (or records why not). */
  install(serverId: string): Promise<void>;
  /** Stops the server's process if any and removes its files; resolves when both are done. */
  remove(serverId: string): Promise<void>;
}
