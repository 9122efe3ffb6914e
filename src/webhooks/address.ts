import dns from 'node:dns';
import net from 'node:net';

/** How a host name is resolved: dns.lookup's shape with `all: true` (tests pass their own). */
export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE=true (SECURITY.md, SSRF): this host, private
 * networks and cloud metadata services. IPv4: RFC 6890 special-purpose blocks that are not global (this network,
 * RFC 1918 private, RFC 6598 shared, loopback, link-local incl. 169.254.169.254 metadata, IETF protocol
 * assignments, benchmarking, multicast, reserved, broadcast). IPv6: unspecified, loopback, unique local (RFC 4193,
 * incl. fd00:ec2::254 metadata), link-local, multicast, documentation; IPv4-mapped and NAT64 addresses are
 * judged by the IPv4 address they carry.
 */
const blocked = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) blocked.addSubnet(net6, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (::ffff:a.b.c.d, 64:ff9b::/96), or null. */
function embeddedV4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return null;
  if (m[1]) return m[1];
  const hi = parseInt(m[2], 16);
  const lo = parseInt(m[3], 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** True when the address is one a webhook may not reach by default. */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedV4(address);
  return v4 !== null ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
}

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
    if (bad) throw new Error(`${host} resolves to ${bad.address}, a loopback, private, link-local or metadata address`);
  }
  return addresses[0];
}
