import type { components } from '../../../generated/v1';
import { isPlainText } from '../software/console-text';

/** Who is online, as the game itself reports it (the spec's Players schema). */
export type Players = components['schemas']['Players'];

/**
 * Parses the launcher's `{ type: 'players', online, max, players }` IPC message (flying-squid-launcher.cjs).
 * Returns null for anything else, so a malformed message is ignored rather than trusted. A player whose name or
 * uuid is not plain text within the spec's Player (at most 64 and 36 characters; no control, bidi or line
 * separator character) is left out: the games refuse such names at login (issue 39 §3), and should one come
 * anyway it never reaches `GET …/players`, an event or a webhook.
 */
export function playersFromMessage(msg: unknown): Players | null {
  if (typeof msg !== 'object' || msg === null || (msg as { type?: unknown }).type !== 'players') return null;
  const m = msg as { online?: unknown; max?: unknown; players?: unknown };
  if (typeof m.online !== 'number' || typeof m.max !== 'number' || !Array.isArray(m.players)) return null;
  const players = (m.players as unknown[])
    .filter((p): p is { name: string; uuid: string } => {
      const entry = p as { name?: unknown; uuid?: unknown } | null | undefined;
      return typeof entry?.name === 'string' && typeof entry.uuid === 'string';
    })
    .filter((p) => isPlainText(p.name, 64) && isPlainText(p.uuid, 36))
    .map((p) => ({ name: p.name, uuid: p.uuid }));
  return { online: m.online, max: m.max, players };
}

/** Parses `{ type: 'tps', tps }`; null for anything else. */
export function tpsFromMessage(msg: unknown): number | null {
  if (typeof msg !== 'object' || msg === null || (msg as { type?: unknown }).type !== 'tps') return null;
  const tps = (msg as { tps?: unknown }).tps;
  return typeof tps === 'number' && Number.isFinite(tps) ? tps : null;
}

/**
 * Server List Ping (https://minecraft.wiki/w/Java_Edition_protocol/Server_List_Ping) through minecraft-protocol's
 * `ping`, for software without an IPC channel (an operator's Paper jar). The sample list is the game's choice:
 * vanilla servers show at most 12 names, so `players` may be shorter than `online`. minecraft-protocol is loaded on
 * the first ping: with the account libraries it pulls in it takes about 0.4 s to load, which every start of the
 * service (and every test file) paid, though only software without IPC is pinged.
 */
export async function pingPlayers(host: string, port: number, timeoutMs = 5000): Promise<Players> {
  const target = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const { ping } = await import('minecraft-protocol');
  const result = await ping({ host: target, port, closeTimeout: timeoutMs, noPongTimeout: timeoutMs });
  if ('players' in result) {
    const sample = result.players.sample ?? [];
    return { online: result.players.online, max: result.players.max, players: sample.map((p) => ({ name: p.name, uuid: p.id })).filter((p) => typeof p.name === 'string' && typeof p.uuid === 'string' && isPlainText(p.name, 64) && isPlainText(p.uuid, 36)) };
  }
  return { online: result.playerCount, max: result.maxPlayers, players: [] };
}
