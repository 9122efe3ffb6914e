// DNS messages for dynamic updates (RFC 2136), in the wire format of RFC 1035 §4.1: only what the service sends
// (an update with its zone, prerequisite and update sections) and what it reads back (the header's RCODE, and the
// TSIG record that signs an answer, tsig.ts). Names are written uncompressed (RFC 1035 §4.1.4 allows it).

/** Record types the service writes (RFC 1035 §3.2.2, RFC 3596 §2.1 AAAA, RFC 2782 SRV, RFC 8945 TSIG). */
export const TYPE = { A: 1, CNAME: 5, TXT: 16, AAAA: 28, SRV: 33, TSIG: 250, ANY: 255, SOA: 6 } as const;
/** Classes (RFC 2136 §2.4/§2.5: ANY deletes an RRset, NONE deletes one record). */
export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
/** Opcode of an update (RFC 2136 §1). */
const OPCODE_UPDATE = 5;

export type RecordData =
  | { type: 'A'; address: string }
  | { type: 'AAAA'; address: string }
  | { type: 'CNAME'; target: string }
  | { type: 'TXT'; text: string }
  | { type: 'SRV'; priority: number; weight: number; port: number; target: string };

/** One change of an update's update section (RFC 2136 §2.5). */
export type Change =
  | { op: 'add'; name: string; ttl: number; data: RecordData }
  /** Deletes every record of a type at a name (§2.5.2). */
  | { op: 'delete-rrset'; name: string; type: RecordData['type'] }
  /** Deletes every record at a name (§2.5.3). */
  | { op: 'delete-name'; name: string };

/** A name in wire format, lowercased (RFC 4034 §6.2's canonical form, which TSIG's MAC also uses). */
export function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter((l) => l !== '');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label.toLowerCase(), 'ascii');
    if (bytes.length > 63) throw new Error(`DNS label longer than 63 octets: ${label}`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const out = Buffer.concat(parts);
  if (out.length > 255) throw new Error(`DNS name longer than 255 octets: ${name}`);
  return out;
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function ipv4(address: string): Buffer {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: ${address}`);
  return Buffer.from(parts);
}

function ipv6(address: string): Buffer {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const hex = (s: string | undefined) => (s ? s.split(':') : []);
  const front = hex(head);
  const back = hex(tail);
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) throw new Error(`not an IPv6 address: ${address}`);
  return Buffer.concat(groups.map((g) => u16(parseInt(g, 16))));
}

function rdata(data: RecordData): Buffer {
  switch (data.type) {
    case 'A':
      return ipv4(data.address);
    case 'AAAA':
      return ipv6(data.address);
    case 'CNAME':
      return encodeName(data.target);
    case 'TXT': {
      const text = Buffer.from(data.text, 'utf8');
      if (text.length > 255) throw new Error('TXT string longer than 255 octets');
      return Buffer.concat([Buffer.from([text.length]), text]);
    }
    case 'SRV':
      return Buffer.concat([u16(data.priority), u16(data.weight), u16(data.port), encodeName(data.target)]);
  }
}

/** A resource record (RFC 1035 §4.1.3). */
export function encodeRecord(name: string, type: number, cls: number, ttl: number, data: Buffer): Buffer {
  return Buffer.concat([encodeName(name), u16(type), u16(cls), u32(ttl), u16(data.length), data]);
}

function encodeChange(change: Change): Buffer {
  switch (change.op) {
    case 'add':
      return encodeRecord(change.name, TYPE[change.data.type], CLASS.IN, change.ttl, rdata(change.data));
    case 'delete-rrset':
      return encodeRecord(change.name, TYPE[change.type], CLASS.ANY, 0, Buffer.alloc(0));
    case 'delete-name':
      return encodeRecord(change.name, TYPE.ANY, CLASS.ANY, 0, Buffer.alloc(0));
  }
}

/**
 * An update message (RFC 2136 §2): the zone section names the zone (class IN, type SOA, §2.3), no prerequisites,
 * the changes in order (a server applies them all or none, §3.4). Unsigned: tsig.ts signs it.
 */
export function encodeUpdate(id: number, zone: string, changes: Change[]): Buffer {
  // Header (§2.2): ID, then QR=0, Opcode=UPDATE, the rest zero; ZOCOUNT 1, PRCOUNT 0, UPCOUNT, ADCOUNT 0.
  const header = Buffer.concat([u16(id), u16(OPCODE_UPDATE << 11), u16(1), u16(0), u16(changes.length), u16(0)]);
  const zoneSection = Buffer.concat([encodeName(zone), u16(TYPE.SOA), u16(CLASS.IN)]);
  return Buffer.concat([header, zoneSection, ...changes.map(encodeChange)]);
}

/** RCODEs an update's answer may carry (RFC 2136 §2.2, RFC 8945 §5.3.2 for NOTAUTH with TSIG). */
export const RCODE_NAMES: Record<number, string> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
};

/** Reads a (possibly compressed) name at `offset`; returns it and the offset after it in the message. */
export function readName(msg: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let at = offset;
  let next = -1;
  for (let hops = 0; hops < 128; hops++) {
    const len = msg.readUInt8(at);
    if (len === 0) return { name: labels.join('.'), next: next === -1 ? at + 1 : next };
    if ((len & 0xc0) === 0xc0) {
      if (next === -1) next = at + 2;
      at = msg.readUInt16BE(at) & 0x3fff;
      continue;
    }
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += 1 + len;
  }
  throw new Error('DNS name with a compression loop');
}

/** Skips one resource record (RFC 1035 §4.1.3); returns its type and where it and its data begin and end. */
export function readRecord(msg: Buffer, offset: number): { name: string; type: number; start: number; rdata: number; end: number } {
  const { name, next } = readName(msg, offset);
  const type = msg.readUInt16BE(next);
  const rdlength = msg.readUInt16BE(next + 8);
  return { name, type, start: offset, rdata: next + 10, end: next + 10 + rdlength };
}
