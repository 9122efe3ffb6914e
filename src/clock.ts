/** Time is passed in, never read from globals, so tests can move it (docs/conventions.md "Dependencies"). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
