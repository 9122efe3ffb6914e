// Sends signed dynamic updates (RFC 2136) to the zone's authoritative server over TCP (RFC 1035 §4.2.2: each
// message after a two-octet length; RFC 7766 makes TCP a full peer of UDP, and an update never needs truncation).
import { connect } from 'node:net';
import { randomInt } from 'node:crypto';
import { RCODE_NAMES, encodeUpdate, type Change } from './message';
import { TsigError, sign, verify, type TsigKey } from './tsig';

export interface DnsUpdaterOptions {
  /** The authoritative server: host and port (DNS_SERVER, e.g. 127.0.0.1:53). */
  host: string;
  port: number;
  /** The zone the service publishes into (DNS_ZONE), without the final dot. */
  zone: string;
  key: TsigKey;
  now: () => Date;
  /** How long one exchange may take before it counts as failed. */
  timeoutMs?: number;
}

/** An answer other than NOERROR, or no answer: `rcode` is RFC 2136 §2.2's name (REFUSED, NOTAUTH, …) or null. */
export class DnsUpdateError extends Error {
  constructor(message: string, readonly rcode: string | null) {
    super(message);
  }
}

export interface DnsUpdater {
  /** Applies the changes as one update (all or none, RFC 2136 §3.4); rejects with DnsUpdateError. */
  update(changes: Change[]): Promise<void>;
  /**
   * An update that changes nothing: the server checks our key and its permission for the zone as for any other
   * (RFC 2136 §3.3), so a wrong key, zone or ACL is found at start, not at the first server's name.
   */
  check(): Promise<void>;
}

export function createDnsUpdater(options: DnsUpdaterOptions): DnsUpdater {
  const timeoutMs = options.timeoutMs ?? 5_000;

  async function update(changes: Change[]): Promise<void> {
    const id = randomInt(0, 0x10000);
    const { signed, mac } = sign(encodeUpdate(id, options.zone, changes), options.key, options.now());
    const answer = await exchange(options.host, options.port, signed, timeoutMs);
    if (answer.length < 12 || answer.readUInt16BE(0) !== id) throw new DnsUpdateError('the DNS server answered another message', null);
    const rcode = answer.readUInt16BE(2) & 0x0f;
    const name = RCODE_NAMES[rcode] ?? String(rcode);
    const refused = () => {
      const why = rcode === 5 ? ': the key may not update this zone' : rcode === 9 || rcode === 10 ? `: it is not authoritative for ${options.zone}, or does not know the key` : '';
      return new DnsUpdateError(`the DNS server refused the update (${name})${why}`, name);
    };
    try {
      verify(answer, mac, options.key, options.now());
    } catch (err) {
      // A server that cannot verify us answers unsigned (RFC 8945 §5.2): a TSIG error says why, else the RCODE does.
      // Believing an unsigned refusal costs only a retry; an unsigned success is never believed.
      if (rcode !== 0 && !(err instanceof TsigError)) throw refused();
      throw new DnsUpdateError(`${(err as Error).message} (${name})`, name);
    }
    if (rcode !== 0) throw refused();
  }

  return { update, check: () => update([]) };
}

/** One request and its answer over a fresh TCP connection. */
function exchange(host: string, port: number, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let received = 0;
    const fail = (message: string) => {
      socket.destroy();
      reject(new DnsUpdateError(message, null));
    };
    socket.setTimeout(timeoutMs, () => fail(`the DNS server at ${host}:${port} did not answer within ${timeoutMs} ms`));
    socket.on('error', (err) => fail(`the DNS server at ${host}:${port} could not be reached: ${err.message}`));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(message.length);
      socket.write(Buffer.concat([length, message]));
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      const all = Buffer.concat(chunks, received);
      if (all.length >= 2 && all.length >= 2 + all.readUInt16BE(0)) {
        socket.end();
        resolve(all.subarray(2, 2 + all.readUInt16BE(0)));
      }
    });
    socket.on('end', () => fail(`the DNS server at ${host}:${port} closed the connection without an answer`));
  });
}
