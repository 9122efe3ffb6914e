// RFC 2136 updates signed with TSIG (src/dns/), against a real Knot DNS server on loopback, read back with dig.
import { createDnsUpdater, type DnsUpdater } from '../../src/dns/updater';
import { parseTsigKey } from '../../src/dns/tsig';
import { startKnot, type Knot } from '../helpers/knot';

let knot: Knot;
const updater = (over: { zone?: string; key?: string; port?: number; skewMs?: number } = {}): DnsUpdater =>
  createDnsUpdater({
    host: '127.0.0.1',
    port: over.port ?? knot.port,
    zone: over.zone ?? knot.zone,
    key: parseTsigKey(over.key ?? knot.key),
    now: () => new Date(Date.now() + (over.skewMs ?? 0)),
    timeoutMs: 3_000,
  });

beforeAll(async () => {
  knot = await startKnot();
});
afterAll(async () => {
  await knot.stop();
});

test('records added, replaced and removed, as dig reads them', async () => {
  const u = updater();
  await u.check();
  await u.update([
    { op: 'add', name: 'survival.play.test', ttl: 30, data: { type: 'A', address: '127.0.0.1' } },
    { op: 'add', name: 'survival.play.test', ttl: 30, data: { type: 'AAAA', address: 'fd00::2:1' } },
    { op: 'add', name: '_minecraft._tcp.survival.play.test', ttl: 30, data: { type: 'SRV', priority: 0, weight: 5, port: 25617, target: 'survival.play.test' } },
    { op: 'add', name: 'luanti.play.test', ttl: 30, data: { type: 'CNAME', target: 'eu-2.example.net' } },
    { op: 'add', name: 'note.play.test', ttl: 30, data: { type: 'TXT', text: 'hello' } },
  ]);
  expect(knot.dig('survival.play.test', 'A')).toEqual(['127.0.0.1']);
  expect(knot.dig('survival.play.test', 'AAAA')).toEqual(['fd00::2:1']);
  expect(knot.dig('_minecraft._tcp.survival.play.test', 'SRV')).toEqual(['0 5 25617 survival.play.test.']);
  expect(knot.dig('luanti.play.test', 'CNAME')).toEqual(['eu-2.example.net.']);
  expect(knot.dig('note.play.test', 'TXT')).toEqual(['"hello"']);

  await u.update([
    { op: 'delete-rrset', name: '_minecraft._tcp.survival.play.test', type: 'SRV' },
    { op: 'add', name: '_minecraft._tcp.survival.play.test', ttl: 30, data: { type: 'SRV', priority: 0, weight: 5, port: 25699, target: 'survival.play.test' } },
    { op: 'delete-name', name: 'note.play.test' },
  ]);
  expect(knot.dig('_minecraft._tcp.survival.play.test', 'SRV')).toEqual(['0 5 25699 survival.play.test.']);
  expect(knot.dig('note.play.test', 'TXT')).toEqual([]);
});

test.each([
  ['a wrong secret', { key: 'hmac-sha256:gsh-test:' + Buffer.alloc(32, 7).toString('base64') }, /TSIG BADSIG/],
  ['a key the server does not know', { key: 'hmac-sha256:someone-else:' + Buffer.alloc(32, 7).toString('base64') }, /TSIG BADKEY/],
  ['a clock an hour behind', { skewMs: -3_600_000 }, /TSIG BADTIME/],
  ['a zone the server does not serve', { zone: 'elsewhere.test' }, /refused the update \(NOTAUTH\): it is not authoritative for elsewhere\.test/],
])('refused with a sentence that says why: %s', async (_label, over, message) => {
  await expect(updater(over).check()).rejects.toThrow(message);
  await expect(updater(over).update([{ op: 'add', name: 'x.play.test', ttl: 30, data: { type: 'A', address: '10.9.9.9' } }])).rejects.toThrow();
  expect(knot.dig('x.play.test', 'A')).toEqual([]);
});

test('a DNS server that is down is named in the error', async () => {
  await knot.pause();
  try {
    await expect(updater().check()).rejects.toThrow(/could not be reached|closed the connection|did not answer/);
  } finally {
    await knot.resume();
  }
  await updater().check();
});

test('key text that is not a TSIG key is refused before anything is sent', () => {
  expect(() => parseTsigKey('hmac-md5:k:c2VjcmV0')).toThrow(/not one of/);
  expect(() => parseTsigKey('hmac-sha256:k')).toThrow(/looks like/);
  expect(() => parseTsigKey('hmac-sha256:k:not base64!')).toThrow(/not base64/);
});
