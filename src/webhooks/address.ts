import dns from 'node:dns';
import net from 'node:net';

/** How a host name is resolved: dns.lookup's shape with `all: true` (tests pass their own). */
export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, order: 'verbatim' });

/**
 * Addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE=true (SECURITY.md, SSRF): this host, private
 * networks and cloud metadata services. IPv4: RFC 6890 special-purpose blocks that are not global (this network,
 * RFC 1918 private, RFC 6598 shared, loopback, link-local incl. 169.254.169.254 metadata, IETF protocol
 * assignments, benchmarking, multicast, reserved, broadcast). IPv6: unspecified, loopback, unique local (RFC 4193,
 * incl. fd00:ec2::254 metadata), link-local, site-local (RFC 3879), multicast, documentation (RFC 3849, RFC 9637),
 * discard and dummy prefixes (RFC 6666, RFC 9780), SRv6 SIDs (5f00::/16, RFC 9602), the IETF protocol assignments
 * 2001::/23 (RFC 2928; benchmarking 2001:2::/48, ORCHID 2001:10::/28) but for the entries the IANA IPv6
 * Special-Purpose Address Registry marks globally reachable (GLOBAL_IN_2001), and local-use NAT64 (64:ff9b:1::/48,
 * RFC 8215: never global, and where it carries its IPv4 address depends on a prefix length only its network knows).
 * IPv6 forms that carry an IPv4 address are judged by that address (embeddedV4s).
 */
const blocked = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32],
  ['3fff::', 20], ['100::', 64], ['100:0:0:1::', 64], ['64:ff9b:1::', 48], ['5f00::', 16], ['2001::', 23],
] as const) blocked.addSubnet(net6, prefix, 'ipv6');

/** The entries of 2001::/23 the IANA IPv6 Special-Purpose Address Registry marks globally reachable. */
const GLOBAL_IN_2001 = new net.BlockList();
for (const [net6, prefix] of [
  ['2001:1::1', 128], ['2001:1::2', 128], ['2001:1::3', 128], ['2001:3::', 32], ['2001:4:112::', 48], ['2001:20::', 28], ['2001:30::', 28],
] as const) GLOBAL_IN_2001.addSubnet(net6, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (RFC 4291 §2.2, with a trailing dotted IPv4 part), or null. */
function groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const front = part(head);
  const back = part(tail);
  const all = text.includes('::') ? [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back] : front;
  return all.length === 8 && all.every((g) => g >= 0 && g <= 0xffff) ? all : null;
}

const v4 = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');

/**
 * The IPv4 addresses an IPv6 address carries, each of which must be allowed for it to be: IPv4-compatible
 * ::a.b.c.d and IPv4-mapped ::ffff:a.b.c.d (RFC 4291 §2.5.5), IPv4-translated ::ffff:0:a.b.c.d (RFC 2765 §2.1), NAT64 64:ff9b::a.b.c.d (RFC 6052 §2.1), 6to4
 * 2002:AABB:CCDD:: (RFC 3056 §2), and Teredo 2001:0:SSSS:SSSS::…:CCCC:CCCC, its server and its client (stored
 * inverted, RFC 4380 §4). An address the network may translate to IPv4 reaches that IPv4 address.
 */
function embeddedV4s(g: number[]): string[] {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return [v4(g[6], g[7])];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [v4(g[6], g[7])];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [v4(g[6], g[7])];
  if (g[0] === 0x2002) return [v4(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [v4(g[2], g[3]), v4(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

/** True when the address is one a webhook may not reach by default. */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const g = groups(address);
  if (!g) return true;
  const carried = embeddedV4s(g);
  if (carried.length > 0) return carried.some((a) => blocked.check(a, 'ipv4'));
  return blocked.check(address, 'ipv6') && !GLOBAL_IN_2001.check(address, 'ipv6');
}

/**
 * The ports a webhook may use unless WEBHOOK_ALLOW_PRIVATE=true: https's own (443) and its usual alternative (8443).
 * A receiver needs no other, and any other would let a tenant knock on other services of outside hosts (SMTP,
 * SSH, databases) from this service's address (SECURITY.md, SSRF).
 */
export const WEBHOOK_PORTS = ['443', '8443'];

/** Why a URL may not be used as given (scheme, credentials), or null. Checked at creation and at each delivery. */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must use https:';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (!allowPrivate && url.port !== '' && !WEBHOOK_PORTS.includes(url.port)) return `port must be ${WEBHOOK_PORTS.join(' or ')}`;
  return null;
}

/**
 * Resolves the URL's host once and picks the address to connect to: the first one, after checking that none is
 * forbidden (a name with one private address among public ones is refused as a whole, so a resolver cannot steer
 * a later connection). The caller connects to exactly this address (DNS rebinding: the check and the connection
 * see the same answer). Throws an Error whose message says why, for the delivery's `error` or a 400.
 */
export async function resolveTarget(raw: string, allowPrivate: boolean, lookup: Lookup): Promise<{ address: string; family: number }> {
  const problem = urlProblem(raw, allowPrivate);
  if (problem) throw new Error(`the URL ${problem}`);
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const family = net.isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await lookup(host);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    // The address itself is not named: it is this service's resolver's answer (internal names), not the tenant's.
    const kinds = 'loopback, private, link-local, metadata or another non-global one';
    if (bad) throw new Error(family !== 0 ? `${host} is a forbidden address (${kinds})` : `${host} resolves to a forbidden address (${kinds})`);
  }
  return addresses[0];
}
