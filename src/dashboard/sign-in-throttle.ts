import type { Clock } from '../clock';

/** The sign-in throttle's limits (README "Configuration"; docs/conventions.md "Authentication"). */
export interface SignInLimits {
  /** Failures of one email+address pair before each further attempt of that pair must wait. */
  freeFailures: number;
  /** The wait starts at 1 s and doubles with each further failure, up to this. */
  maxDelayMs: number;
  /** Failures from one address (any email) per window before unknown browsers there must wait for the window. */
  addressFailures: number;
  addressWindowMs: number;
  /**
   * Failures of a pair (for a known address) or of a browser (for a known browser) beyond which being known no
   * longer skips the wait, so a known source is never an unbounded password oracle.
   */
  knownCeiling: number;
}

/**
 * How far the service trusts where an attempt comes from, for that email's user: `browser` when it carries a
 * session cookie of that user (live or recently expired), `address` when that user signed in from this address
 * before, else `none`.
 */
export type Trust = 'browser' | 'address' | 'none';

/** One sign-in attempt: the email as typed, the client address key (IPv6 by /56), the known browser's session. */
export interface Attempt {
  email: string;
  address: string;
  sessionId?: string;
}

interface Count {
  failures: number;
  first: number;
  last: number;
}

/** A pair's failures are forgotten a day after its last one; browsers' likewise. */
const FORGET_AFTER_MS = 24 * 3600_000;
/** Counts kept at most; the least recently failed are dropped first, so the memory is bounded. */
const MAX_ENTRIES = 100_000;

/**
 * Progressive delay for dashboard sign-in, instead of a lock (OWASP Authentication Cheat Sheet, "Protect against
 * automated attacks"; docs/conventions.md "Authentication"). Counts live in memory, per process, and use the
 * injected clock.
 *
 * - Per email+address pair: the first `freeFailures` failures cost nothing; after that each attempt must wait
 *   1 s, 2 s, 4 s … (capped) after the pair's last failure. Waiting is answered as 429 + Retry-After by the
 *   caller, never slept on the server.
 * - Per address: at most `addressFailures` failures per window for every email together (guessing many accounts
 *   from one place); past it, unknown browsers from there wait for the window's end.
 * - While it must wait, an attempt is refused unchecked, except from a known browser (while that browser has
 *   fewer than `knownCeiling` failures of its own) or a known address (while its pair has fewer than
 *   `knownCeiling`): their password is checked, so the right one gets in although an attacker elsewhere, or
 *   behind the same address, keeps failing for that email. A wrong one there is a failure like any other (the
 *   caller answers it as a wait too), and the ceiling bounds how many guesses a known place ever gets checked.
 *
 * `begin` counts an attempt it lets check as a failure at once, and `succeeded` takes it back: concurrent
 * attempts cannot all pass before the first failure is recorded.
 */
export function createSignInThrottle(clock: Clock, limits: SignInLimits) {
  const counts = new Map<string, Count>();
  const pairKey = (a: Attempt) => `pair\0${a.email.toLowerCase()}\0${a.address}`;
  const addressKey = (a: Attempt) => `addr\0${a.address}`;
  const browserKey = (a: Attempt) => `ses\0${a.sessionId ?? ''}`;

  /** A count, or undefined once forgotten: a day after its last failure, or at the end of its `windowMs`. */
  function read(key: string, windowMs?: number): Count | undefined {
    const count = counts.get(key);
    const expired = count && (windowMs ? clock.now() - count.first >= windowMs : clock.now() - count.last >= FORGET_AFTER_MS);
    if (expired) counts.delete(key);
    return expired ? undefined : count;
  }

  function add(key: string, delta: 1 | -1, windowMs?: number): void {
    const now = clock.now();
    const count = read(key, windowMs);
    if (!count && delta < 0) return;
    counts.delete(key); // re-inserted last: Map order is least recently failed first
    const next = count ?? { failures: 0, first: now, last: now };
    next.failures = Math.max(0, next.failures + delta);
    if (delta > 0) next.last = now;
    counts.set(key, next);
    if (counts.size > MAX_ENTRIES) counts.delete(counts.keys().next().value as string);
  }

  function pairWaitMs(pair: Count | undefined): number {
    if (!pair || pair.failures < limits.freeFailures) return 0;
    const delay = Math.min(limits.maxDelayMs, 1000 * 2 ** (pair.failures - limits.freeFailures));
    return Math.max(0, pair.last + delay - clock.now());
  }

  function addressWaitMs(address: Count | undefined): number {
    if (!address || address.failures < limits.addressFailures) return 0;
    return Math.max(0, address.first + limits.addressWindowMs - clock.now());
  }

  /** Whether a known place may still have its password checked while it must wait. */
  function knownPlaceChecks(a: Attempt, trust: Trust, pair: Count | undefined): boolean {
    if (trust === 'browser') return (read(browserKey(a))?.failures ?? 0) < limits.knownCeiling;
    if (trust === 'address') return (pair?.failures ?? 0) < limits.knownCeiling;
    return false;
  }

  function count(a: Attempt, trust: Trust, delta: 1 | -1): void {
    add(pairKey(a), delta);
    add(addressKey(a), delta, limits.addressWindowMs);
    if (trust === 'browser') add(browserKey(a), delta);
  }

  /** How long an attempt for this email from this address must wait now (0: it need not). */
  function waitMs(a: Attempt): number {
    return Math.max(pairWaitMs(read(pairKey(a))), addressWaitMs(read(addressKey(a), limits.addressWindowMs)));
  }

  return {
    waitMs,

    /**
     * Whether this attempt may have its password checked; if so it counts as a failure from now on, until
     * `succeeded`. `waitMs` is the wait it was under (0: none), which the caller answers after a wrong password.
     */
    begin(a: Attempt, trust: Trust): { check: boolean; waitMs: number } {
      const wait = waitMs(a);
      const check = wait === 0 || knownPlaceChecks(a, trust, read(pairKey(a)));
      if (check) count(a, trust, 1);
      return { check, waitMs: wait };
    },

    /**
     * The attempt `begin` let through had the right password: its failure is taken back. The pair's earlier
     * failures stay (an attacker may share the address); they are forgotten a day after the last one.
     */
    succeeded(a: Attempt, trust: Trust): void {
      count(a, trust, -1);
    },
  };
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>;
