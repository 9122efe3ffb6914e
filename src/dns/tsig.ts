// Transaction signatures (TSIG, RFC 8945): the service signs each update with the operator's shared key and checks
// the server's signed answer, so only the key's holder can change the zone and a forged answer is not believed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CLASS, TYPE, encodeName, encodeRecord, readName, readRecord } from './message';

/** A TSIG key as `knotc`/`tsig-keygen` print it: its name, its algorithm, its secret (base64). */
export interface TsigKey {
  name: string;
  algorithm: 'hmac-sha256' | 'hmac-sha512' | 'hmac-sha384' | 'hmac-sha224' | 'hmac-sha1';
  secret: Buffer;
}

/** Fudge: how far apart the two clocks may be, in seconds (RFC 8945 §5.2.3 recommends 300). */
const FUDGE = 300;

/** TSIG's error field (RFC 8945 §3, IANA "DNS RCODEs"). */
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** The server refused our signature: its TSIG error (BADSIG, BADKEY, BADTIME) says why. */
export class TsigError extends Error {}

/** Parses `hmac-sha256:name:base64secret` (nsupdate's `-y` form, which the README's DNS_TSIG_KEY uses). */
export function parseTsigKey(text: string): TsigKey {
  const parts = text.split(':');
  if (parts.length !== 3) throw new Error('a TSIG key looks like hmac-sha256:<key name>:<base64 secret>');
  const [algorithm, name, secret] = parts;
  if (!['hmac-sha256', 'hmac-sha512', 'hmac-sha384', 'hmac-sha224', 'hmac-sha1'].includes(algorithm)) {
    throw new Error(`TSIG algorithm ${algorithm} is not one of hmac-sha256, hmac-sha384, hmac-sha512, hmac-sha224, hmac-sha1`);
  }
  const bytes = Buffer.from(secret, 'base64');
  if (bytes.length === 0 || bytes.toString('base64').replace(/=+$/, '') !== secret.replace(/=+$/, '')) {
    throw new Error('the TSIG secret is not base64');
  }
  return { name, algorithm: algorithm as TsigKey['algorithm'], secret: bytes };
}

const digestOf = (algorithm: TsigKey['algorithm']) => algorithm.slice('hmac-'.length);

function u48(seconds: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(seconds, 0, 6);
  return b;
}

/** The TSIG variables that follow the message in the MAC's input (RFC 8945 §4.3.3). */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  const fields = Buffer.alloc(6);
  fields.writeUInt16BE(fudge, 0);
  fields.writeUInt16BE(error, 2);
  fields.writeUInt16BE(other.length, 4);
  const head = Buffer.alloc(6);
  head.writeUInt16BE(CLASS.ANY, 0);
  head.writeUInt32BE(0, 2); // TTL
  return Buffer.concat([encodeName(key.name), head, encodeName(key.algorithm), u48(timeSigned), fields, other]);
}

function mac(key: TsigKey, ...parts: Buffer[]): Buffer {
  const h = createHmac(digestOf(key.algorithm), key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Signs a message (RFC 8945 §5.1): appends the TSIG record and counts it in ARCOUNT. Returns it and its MAC. */
export function sign(message: Buffer, key: TsigKey, now: Date): { signed: Buffer; mac: Buffer } {
  const timeSigned = Math.floor(now.getTime() / 1000);
  const digest = mac(key, message, variables(key, timeSigned, FUDGE, 0, Buffer.alloc(0)));
  const sizes = Buffer.alloc(4);
  sizes.writeUInt16BE(FUDGE, 0);
  sizes.writeUInt16BE(digest.length, 2);
  // Algorithm, time, fudge, MAC size, MAC, original ID, error 0, other length 0 (RFC 8945 §4.2).
  const rd = Buffer.concat([encodeName(key.algorithm), u48(timeSigned), sizes, digest, message.subarray(0, 2), Buffer.alloc(4)]);
  const signed = Buffer.concat([message, encodeRecord(key.name, TYPE.TSIG, CLASS.ANY, 0, rd)]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { signed, mac: digest };
}

/**
 * Checks an answer's TSIG (RFC 8945 §5.3.2, the client's side). Throws a sentence for people when the answer is
 * unsigned, signed with another key, or its MAC or time is wrong; when the server could not verify our request it
 * answers unsigned with a TSIG error, which is reported as such (BADKEY: the server does not know the key).
 */
export function verify(answer: Buffer, requestMac: Buffer, key: TsigKey, now: Date): void {
  const arcount = answer.readUInt16BE(10);
  if (arcount === 0) throw new Error('the DNS server answered without a TSIG signature');
  // The TSIG record is the last of the additional section: walk the sections to find where it starts.
  let at = 12;
  for (let i = 0; i < answer.readUInt16BE(4); i++) at = readName(answer, at).next + 4; // zone/question section
  const records = answer.readUInt16BE(6) + answer.readUInt16BE(8) + arcount;
  let last = readRecord(answer, at);
  for (let i = 1; i < records; i++) last = readRecord(answer, last.end);
  if (last.type !== TYPE.TSIG) throw new Error('the DNS server answered without a TSIG signature');
  const alg = readName(answer, last.rdata);
  const timeSigned = answer.readUIntBE(alg.next, 6);
  const fudge = answer.readUInt16BE(alg.next + 6);
  const macSize = answer.readUInt16BE(alg.next + 8);
  const theirMac = answer.subarray(alg.next + 10, alg.next + 10 + macSize);
  const rest = alg.next + 10 + macSize;
  const originalId = answer.readUInt16BE(rest);
  const error = answer.readUInt16BE(rest + 2);
  const otherLen = answer.readUInt16BE(rest + 4);
  const other = answer.subarray(rest + 6, rest + 6 + otherLen);
  if (error !== 0) throw new TsigError(`the DNS server refused the signature (TSIG ${TSIG_ERRORS[error] ?? error}): check DNS_TSIG_KEY`);
  if (last.name.toLowerCase() !== key.name.toLowerCase().replace(/\.$/, '')) throw new Error('the DNS server answered with another TSIG key');
  const unsigned = Buffer.from(answer.subarray(0, last.start));
  unsigned.writeUInt16BE(originalId, 0);
  unsigned.writeUInt16BE(arcount - 1, 10);
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(requestMac.length);
  const expected = mac(key, prefix, requestMac, unsigned, variables(key, timeSigned, fudge, error, other));
  if (expected.length !== theirMac.length || !timingSafeEqual(expected, theirMac)) throw new Error("the DNS server's answer has a wrong TSIG signature");
  if (Math.abs(now.getTime() / 1000 - timeSigned) > fudge) throw new Error("the DNS server's clock and this machine's differ by more than the TSIG fudge");
}
