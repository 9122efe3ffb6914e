// The sign-in throttle on its own, with a clock the test moves: progressive delay per email+address pair, the
// address-wide budget, and the known browser and known address that still get their password checked.
import { createSignInThrottle, type Attempt, type Trust } from '../../src/dashboard/sign-in-throttle';
import { manualClock } from '../helpers/app';

const limits = { freeFailures: 3, maxDelayMs: 8000, addressFailures: 12, addressWindowMs: 60_000, knownCeiling: 6 };

type Who = Attempt & { trust?: Trust };
const attacker: Who = { email: 'victim@example.com', address: '203.0.113.7' };
const victimThere: Who = { ...attacker, trust: 'address' };
const victimBrowser: Who = { ...attacker, trust: 'browser', sessionId: 'ses_1' };
const victimElsewhere: Who = { ...attacker, address: '198.51.100.9' };
const otherUserThere: Who = { ...attacker, email: 'other@example.com' };
const upperCase: Who = { ...attacker, email: 'VICTIM@example.com' };

/**
 * fail: checked outside any wait, and wrong · ok: checked (inside a wait or not), and right · wait: refused
 * unchecked, with this wait (ms) · wrongInWait: checked inside a wait, and wrong (the caller answers 429) ·
 * advance: the clock moves (ms).
 */
type Step = ['fail' | 'ok', Who, number?] | ['wait', Who, number] | ['wrongInWait', Who] | ['advance', number];
const fails = (who: Who, n: number): Step[] => Array.from({ length: n }, () => ['fail', who] as Step);

const cases: [string, Step[]][] = [
  ['the first failures are free; then each attempt waits 1 s, 2 s, 4 s … up to the cap', [
    ...fails(attacker, 3),
    ['wait', attacker, 1000], ['advance', 400], ['wait', attacker, 600], ['advance', 600],
    ['fail', attacker], ['wait', attacker, 2000], ['advance', 2000],
    ['fail', attacker], ['wait', attacker, 4000], ['advance', 4000],
    ['fail', attacker], ['wait', attacker, 8000], ['advance', 8000],
    ['fail', attacker], ['wait', attacker, 8000],
  ]],
  ['the email is matched without regard to case', [...fails(attacker, 3), ['wait', upperCase, 1000]]],
  ['the pair waits, not the email elsewhere nor another email behind the address', [
    ...fails(attacker, 3),
    ['ok', victimElsewhere], ['ok', otherUserThere], ['fail', otherUserThere],
  ]],
  ['an unknown place inside the wait is refused unchecked, even with the right password', [
    ...fails(attacker, 3), ['wait', attacker, 1000], ['wait', attacker, 1000], ['advance', 1000], ['ok', attacker],
  ]],
  ['a known address is checked inside the wait; a wrong password there makes the wait longer', [
    ...fails(attacker, 3),
    ['ok', victimThere], ['wrongInWait', victimThere], ['wait', attacker, 2000], ['ok', victimThere],
  ]],
  ['a known address is checked only until its pair reaches the ceiling', [
    ...fails(attacker, 3), ['wrongInWait', victimThere], ['wrongInWait', victimThere], ['wrongInWait', victimThere],
    ['wait', victimThere, 8000], ['ok', victimBrowser],
  ]],
  ['a known browser has a ceiling of its own, which others cannot use up', [
    ...fails(attacker, 3), ['ok', victimBrowser],
    ['wrongInWait', victimBrowser], ['wrongInWait', victimBrowser], ['wrongInWait', victimBrowser],
    ['wrongInWait', victimBrowser], ['wrongInWait', victimBrowser], ['wrongInWait', victimBrowser],
    ['wait', victimBrowser, 8000],
  ]],
  ['a success takes back only its own failure, not the pair\'s earlier ones', [
    ...fails(attacker, 3), ['ok', victimThere], ['wait', attacker, 1000],
  ]],
  ['a pair\'s count is kept for a day after its last failure', [
    ...fails(attacker, 3), ['advance', 24 * 3600_000 - 1], ['fail', attacker], ['wait', attacker, 2000],
  ]],
  ['a pair\'s count is forgotten a day after its last failure', [
    ...fails(attacker, 3), ['advance', 24 * 3600_000], ...fails(attacker, 3), ['wait', attacker, 1000],
  ]],
  ['past the address budget unknown places there wait for the window; known ones are still checked', [
    ...['a', 'b', 'c', 'd', 'e', 'f'].flatMap((u) => fails({ email: `${u}@example.com`, address: attacker.address }, 2)),
    ['wait', { email: 'new@example.com', address: attacker.address }, 60_000],
    ['ok', { email: 'known@example.com', address: attacker.address, trust: 'address' }],
    ['ok', { email: 'new@example.com', address: '198.51.100.9' }],
    ['advance', 60_000], ['ok', { email: 'new@example.com', address: attacker.address }],
  ]],
];

test.each(cases)('%s', (_name, steps) => {
  const clock = manualClock();
  const throttle = createSignInThrottle(clock, limits);
  steps.forEach((step, i) => {
    const where = `step ${i}: ${JSON.stringify(step)}`;
    if (step[0] === 'advance') return clock.advance(step[1]);
    const [kind, who] = step;
    const trust = who.trust ?? 'none';
    const got = throttle.begin(who, trust);
    if (kind === 'wait') return expect({ where, ...got }).toEqual({ where, check: false, waitMs: step[2] });
    if (kind === 'ok') {
      expect({ where, check: got.check }).toEqual({ where, check: true });
      return throttle.succeeded(who, trust);
    }
    expect({ where, check: got.check, inWait: got.waitMs > 0 }).toEqual({ where, check: true, inWait: kind === 'wrongInWait' });
  });
});

test('concurrent attempts cannot all pass before the first failure is recorded', () => {
  const throttle = createSignInThrottle(manualClock(), limits);
  const checked = Array.from({ length: 50 }, () => throttle.begin(attacker, 'none')).filter((r) => r.check);
  expect(checked).toHaveLength(limits.freeFailures);
});
