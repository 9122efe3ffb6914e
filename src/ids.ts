import crypto from 'node:crypto';

/**
 * Opaque, prefixed, sortable ids (docs/conventions.md "IDs and timestamps": never database row numbers). The time part makes ids
 * sort by creation, which is what cursor pagination walks; 10 random bytes make them unguessable.
 */
export function newId(prefix: 'usr' | 'tok' | 'srv' | 'act' | 'crs' | 'ses' | 'evt' | 'whk' | 'dlv' | 'bkp' | 'alr' | 'mem' | 'sch' | 'run' | 'mov' | 'rcv' | 'fch' | 'key' | 'sfs', now = Date.now()): string {
  const time = now.toString(36).padStart(9, '0');
  const rand = crypto.randomBytes(10).toString('base64url').replace(/[-_]/g, 'x').slice(0, 13);
  return `${prefix}_${time}${rand}`;
}
