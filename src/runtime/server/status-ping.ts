import type { components } from '../../../generated/v1';

/** What a game answers a server-list ping (the spec's ServerStatus). */
export type ServerStatus = components['schemas']['ServerStatus'];

/** A chat component (https://minecraft.wiki/w/Text_component_format) as the ping's `description` carries it. */
interface ChatPart {
  text?: unknown;
  extra?: unknown;
  translate?: unknown;
}

/**
 * A text component in plain text: its `text`, then its `extra` parts in order, each flattened the same way, with
 * the legacy `§` colour and style codes (a `§` and the character after it) left out. A `translate` key without
 * text is left out too: the service has no language files to look it up in.
 */
export function plainMotd(description: unknown): string {
  const walk = (part: unknown): string => {
    if (typeof part === 'string') return part;
    if (Array.isArray(part)) return part.map(walk).join('');
    if (typeof part !== 'object' || part === null) return '';
    const p = part as ChatPart;
    return (typeof p.text === 'string' ? p.text : '') + (Array.isArray(p.extra) ? p.extra.map(walk).join('') : '');
  };
  return walk(description).replace(/§./gu, '').slice(0, 10_000);
}

/** Only a PNG as a `data:` URI is passed on as the icon (ServerStatus.icon); anything else is none. */
function iconOf(favicon: unknown): string | null {
  return typeof favicon === 'string' && favicon.startsWith('data:image/png;base64,') && favicon.length <= 200_000 ? favicon : null;
}

/**
 * Server List Ping (https://minecraft.wiki/w/Java_Edition_protocol/Server_List_Ping) through minecraft-protocol's
 * `ping`, as a player's client asks it before joining: the MOTD, the icon, the version name and the players. Loaded
 * on the first ping, as pingPlayers (probes.ts) does. Throws when the game does not answer within `timeoutMs`.
 */
export async function pingStatus(host: string, port: number, timeoutMs = 5000): Promise<ServerStatus> {
  const target = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const { ping } = await import('minecraft-protocol');
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} seconds`)), timeoutMs);
  });
  try {
    const result = await Promise.race([ping({ host: target, port, closeTimeout: timeoutMs, noPongTimeout: timeoutMs }), timeout]);
    const latency = Math.min(60_000, Math.max(0, Math.round('latency' in result && typeof result.latency === 'number' ? result.latency : Date.now() - started)));
    if ('players' in result) {
      return {
        motd: plainMotd(result.description),
        icon: iconOf(result.favicon),
        version_name: typeof result.version.name === 'string' ? result.version.name.slice(0, 200) : null,
        online: result.players.online,
        max: result.players.max,
        latency_ms: latency,
      };
    }
    return { motd: plainMotd(result.motd), icon: null, version_name: result.version || null, online: result.playerCount, max: result.maxPlayers, latency_ms: latency };
  } finally {
    clearTimeout(timer);
  }
}
