// DNS names for servers (docs/architecture.md "DNS names"; README "Configuration"): where the service publishes,
// with which key, and which names a customer may pick. Without DNS_ZONE the feature is off and nothing changes.
import { domainToASCII } from 'node:url';
import { parseTsigKey, type TsigKey } from './tsig';

export interface DnsSettings {
  /** The zone records go into (DNS_ZONE), lowercase, without the final dot. */
  zone: string;
  /** Its authoritative server, which takes RFC 2136 updates (DNS_SERVER, host:port; port 53 by default). */
  host: string;
  port: number;
  key: TsigKey;
  /** TTL of every record the service writes (DNS_TTL_S): how long a resolver may keep an old address after a move. */
  ttl: number;
  /** Labels no customer may take (DNS_RESERVED_NAMES, comma-separated), lowercase. */
  reserved: ReadonlySet<string>;
}

/** Names an operator most often needs for themselves; DNS_RESERVED_NAMES replaces the list. */
export const DEFAULT_RESERVED = ['www', 'mail', 'smtp', 'imap', 'pop', 'mx', 'ns', 'ns1', 'ns2', 'ftp', 'api', 'admin', 'dashboard', 'status', 'play', 'panel', 'sftp', 'autodiscover'];

/** Reads the DNS_* variables; null when DNS_ZONE is unset. Throws a sentence for the operator on a wrong value. */
export function dnsSettings(env: NodeJS.ProcessEnv, fail: (message: string) => Error): DnsSettings | null {
  const zoneText = env.DNS_ZONE?.trim();
  if (!zoneText) return null;
  const zone = domainToASCII(zoneText.replace(/\.$/, ''));
  if (!zone || !zone.includes('.')) throw fail(`DNS_ZONE must be a domain name such as play.example.com; got "${zoneText}".`);
  const server = env.DNS_SERVER?.trim();
  const m = server ? /^(\[[0-9a-fA-F:.]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(server) : null;
  if (!m) throw fail('DNS_SERVER must be the host (and :port) of the zone\'s authoritative server, e.g. 10.0.0.53:53, when DNS_ZONE is set.');
  const port = m[2] ? Number(m[2]) : 53;
  if (port < 1 || port > 65535) throw fail(`DNS_SERVER's port must be 1 to 65535; got ${port}.`);
  let key: TsigKey;
  try {
    key = parseTsigKey(env.DNS_TSIG_KEY?.trim() ?? '');
  } catch (err) {
    throw fail(`DNS_TSIG_KEY: ${(err as Error).message} (the form nsupdate -y takes), when DNS_ZONE is set.`);
  }
  const ttlText = env.DNS_TTL_S?.trim() || '30';
  const ttl = Number(ttlText);
  if (!/^\d+$/.test(ttlText) || ttl < 5 || ttl > 86_400) throw fail(`DNS_TTL_S must be a whole number of seconds from 5 to 86400; got "${ttlText}".`);
  const reservedText = env.DNS_RESERVED_NAMES;
  const reserved = reservedText === undefined ? DEFAULT_RESERVED : reservedText.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  return { zone: zone.toLowerCase(), host: m[1].replace(/^\[|\]$/g, ''), port, key, ttl, reserved: new Set(reserved) };
}

/** Why a name cannot be a server's DNS name; null when it can (after `normalizeDnsName`). */
export type DnsNameRefusal = 'invalid' | 'reserved';

/**
 * The label a customer typed, as it goes into the zone: lowercase ASCII, an internationalised name converted to
 * its punycode A-label (IDNA, UTS #46, as browsers do: `café` → `xn--caf-dma`), so names that differ only by case
 * are one name. A label is 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen (RFC 1035
 * §2.3.1, RFC 5891 §4.2.3.1); one label only, so a customer never writes below another's name.
 */
export function normalizeDnsName(typed: string, settings: Pick<DnsSettings, 'reserved'>): { name: string } | { refused: DnsNameRefusal } {
  if (typed.includes('.') || typed.trim() !== typed || typed === '') return { refused: 'invalid' };
  const ascii = domainToASCII(typed).toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(ascii)) return { refused: 'invalid' };
  // Hyphens in the third and fourth places mark an encoded label (RFC 5891 §4.2.3.1): only a valid xn-- one.
  if (ascii.slice(2, 4) === '--' && !ascii.startsWith('xn--')) return { refused: 'invalid' };
  if (settings.reserved.has(ascii)) return { refused: 'reserved' };
  return { name: ascii };
}
