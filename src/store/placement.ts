import crypto from 'node:crypto';
import type { Db } from './db';
import { AppError } from '../errors';

/** Where a new server runs: its node (null in the local environment), the host players reach and its port. */
export interface Placement {
  node: string | null;
  host: string;
  port: number;
}

/**
 * Chooses a new server's place. Both methods run inside the transaction that writes the server row
 * (docs/conventions.md "Writes"), so concurrent creates never take one port or overfill one node together.
 */
export interface Placer {
  /** A place for a server whose plan takes `memoryMb`; capacity_exhausted (503, Retry-After) when none has room. */
  place(memoryMb: number): Placement;
  /** A plan change of a placed server from `fromMb` to `toMb`: capacity_exhausted when its node cannot hold it. */
  checkResize(serverId: string, fromMb: number, toMb: number): void;
}

/** The single host of RUNTIME=local: GAME_HOST and GAME_PORT_RANGE. */
export interface AddressPool {
  host: string;
  /** Inclusive port range game servers are given ports from (GAME_PORT_RANGE). */
  portRange: readonly [number, number];
}

/** When capacity may come back (a server deleted, a node added); RFC 9110 §10.2.3. */
const RETRY_AFTER_S = '60';

/** 503 capacity_exhausted: the detail never names a node or a host (tenants never see the provider's layout). */
export function capacityExhausted(detail: string): AppError {
  return new AppError('capacity_exhausted', detail, undefined, { 'Retry-After': RETRY_AFTER_S });
}

/** How many random ports a draw tries, each one lookup, before it lists the used ports of a range nearly full. */
const PROBES = 32;

/**
 * Drawing a free port of an inclusive range. Ports are UNIQUE across every server (migration 001), whichever node
 * it is on, and that UNIQUE index answers whether one is taken.
 */
export function portsIn(db: Db) {
  const taken = db.prepare('SELECT 1 FROM servers WHERE port = ?').pluck();
  const used = db.prepare<unknown[], number>('SELECT port FROM servers WHERE port BETWEEN ? AND ? ORDER BY port').pluck();
  return {
    /** Whether no server has the port (a place found ahead and taken at a move's switch, moves-repo.ts). */
    free: (port: number): boolean => taken.get(port) === undefined,
    /**
     * A free port drawn uniformly at random, or null when none is left. Not the lowest free one: sequential ports
     * would tell every user how many servers a host holds (SECURITY.md, "Threats, defences and their tests").
     * Rejection sampling: a port of the range drawn uniformly and kept only if free is uniform over the free ports,
     * and each try is one index lookup, so a create costs the same with 10 servers or 10,000. Only when PROBES
     * tries all hit taken ports (a range over about 90% full) does it read the range's used ports.
     */
    draw(low: number, high: number): number | null {
      for (let i = 0; i < PROBES; i++) {
        const port = low + crypto.randomInt(high - low + 1);
        if (taken.get(port) === undefined) return port;
      }
      const ports = used.all(low, high);
      const free = high - low + 1 - ports.length;
      if (free <= 0) return null;
      // The n-th free port: walk the used ports (ascending) and step over each one at or below the candidate.
      let candidate = low + crypto.randomInt(free);
      for (const port of ports) {
        if (port > candidate) break;
        candidate++;
      }
      return candidate;
    },
  };
}

/** RUNTIME=local: every server on this host, at GAME_HOST, on a port of GAME_PORT_RANGE; memory is not placed. */
export function singleHostPlacer(db: Db, pool: AddressPool): Placer {
  const ports = portsIn(db);
  return {
    place() {
      const [low, high] = pool.portRange;
      const port = ports.draw(low, high);
      if (port === null) throw capacityExhausted(`Every game port is taken; delete a server, try again later or ask the operator for more.`);
      return { node: null, host: pool.host, port };
    },
    checkResize() {},
  };
}
