/**
 * Polls `probe` until it returns something truthy and returns that; fails with `what` after `timeoutMs`.
 * For conditions that real processes reach in their own time (a game becoming ready, a crash noticed).
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 90_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
