// src/dashboard/totp.ts against the RFCs' own test vectors, and the bundled @simplewebauthn/browser against what
// scripts/bundle-webauthn.js makes from the installed package (so an upgrade cannot leave the page's copy behind).
import fs from 'node:fs';
import { base32Decode, base32Encode, hotp, matchTotp, totpAt } from '../../src/dashboard/totp';
import { newRecoveryCodes, normalRecoveryCode } from '../../src/dashboard/second-factor';

const KEY = Buffer.from('12345678901234567890'); // RFC 4226 Appendix D and RFC 6238 Appendix B (SHA-1)

test('HOTP matches RFC 4226 Appendix D', () => {
  const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  expect(want.map((_, c) => hotp(KEY, c))).toEqual(want);
});

test('TOTP matches RFC 6238 Appendix B (SHA-1, the low six of its eight digits)', () => {
  const secret = base32Encode(KEY);
  expect(base32Decode(secret)).toEqual(KEY);
  const cases: Array<[number, string]> = [[59, '94287082'], [1111111109, '07081804'], [1234567890, '89005924'], [2000000000, '69279037']];
  for (const [t, code] of cases) expect(totpAt(secret, t * 1000)).toBe(code.slice(2));
});

test('a code is taken within one step either side, and never for a step taken before', () => {
  const secret = base32Encode(KEY);
  const now = 1111111109_000;
  const step = Math.floor(now / 30_000);
  expect(matchTotp(secret, totpAt(secret, now - 30_000), now)).toBe(step - 1);
  expect(matchTotp(secret, totpAt(secret, now + 30_000), now)).toBe(step + 1);
  expect(matchTotp(secret, totpAt(secret, now - 60_000), now)).toBeUndefined();
  expect(matchTotp(secret, totpAt(secret, now), now, step)).toBeUndefined();
  expect(matchTotp(secret, 'abcdef', now)).toBeUndefined();
});

test('recovery codes: ten distinct, typed back in any case or spacing', () => {
  const codes = newRecoveryCodes();
  expect(new Set(codes).size).toBe(10);
  expect(normalRecoveryCode(` ${codes[0].replace('-', ' ').toUpperCase()} `)).toBe(codes[0]);
});

test('the dashboard serves the bundle scripts/bundle-webauthn.js makes from the installed @simplewebauthn/browser', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { bundle, OUT } = require('../../scripts/bundle-webauthn.js') as { bundle: () => Promise<string>; OUT: string };
  expect(fs.readFileSync(OUT, 'utf8')).toBe(await bundle());
}, 30_000);
