// Which records a server's DNS name stands for (docs/architecture.md "DNS names"). Players type
// `<name>.<zone>`: Minecraft (Java Edition) clients look up `_minecraft._tcp.<name>.<zone>` first (an SRV record,
// RFC 2782, which carries the port), then connect to its target; Luanti clients take the host name and the port
// the dashboard shows beside it.
import { isIP } from 'node:net';
import type { RecordData } from './message';

/** One record set the service owns: every record of one type at one name. */
export interface RecordSet {
  name: string;
  type: RecordData['type'];
  records: RecordData[];
}

/** What the records are made from: the server's name in the zone and where its game is now. */
export interface DnsTarget {
  dnsName: string;
  host: string;
  port: number;
  transport: 'tcp' | 'udp';
}

/**
 * The record sets for one server. `<name>.<zone>` points at the node's public host: A or AAAA when that is an IP
 * address, else a CNAME to it. For a Minecraft server (tcp), an SRV record at `_minecraft._tcp.<name>.<zone>`
 * gives the port; its target is never an alias (RFC 2782 "Target"), so it names the host itself, or
 * `<name>.<zone>` when the host is an address (an SRV target cannot be an address).
 */
export function recordSets(target: DnsTarget, zone: string): RecordSet[] {
  const name = `${target.dnsName}.${zone}`;
  const family = isIP(target.host);
  const sets: RecordSet[] = [
    family === 4
      ? { name, type: 'A', records: [{ type: 'A', address: target.host }] }
      : family === 6
        ? { name, type: 'AAAA', records: [{ type: 'AAAA', address: target.host }] }
        : { name, type: 'CNAME', records: [{ type: 'CNAME', target: target.host }] },
  ];
  if (target.transport === 'tcp') {
    const srvTarget = family === 0 ? target.host : name;
    sets.push({ name: `_minecraft._tcp.${name}`, type: 'SRV', records: [{ type: 'SRV', priority: 0, weight: 5, port: target.port, target: srvTarget }] });
  }
  return sets;
}

/** Types the service may have written at a name: all are replaced together, so a host that changed kind leaves nothing. */
export const OWNED_TYPES: readonly RecordData['type'][] = ['A', 'AAAA', 'CNAME', 'SRV'];
