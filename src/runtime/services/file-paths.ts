// What a path in a server's files may be (openapi/v1.yaml tag Files, FilePath): checked before anything reaches the
// storage, for the API and for archive entries alike. The storage checks what only the files can tell (links).
import { AppError } from '../../errors';

export const MAX_NAME_BYTES = 255;
export const MAX_PATH_BYTES = 4096;
/** The service's own staging names (folder-ops.cjs, file-ops.cjs RESERVED): never listed, never named. */
const RESERVED = /^\.(gsh-|restore-|old-)/;

/** Why a relative `/`-separated path may not be used, or null. */
export function nameProblem(p: string): string | null {
  if (p.startsWith('/')) return 'is absolute; paths are relative to the server\'s files';
  if (p.includes('\\')) return 'holds a backslash; the separator is /';
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(p)) return 'holds a NUL or another control character';
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  for (const part of p.split('/')) {
    if (part === '' ) return 'has an empty name (a doubled or trailing /)';
    if (part === '.' || part === '..') return `has a "${part}" part`;
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) return `has a name longer than ${MAX_NAME_BYTES} bytes`;
    if (RESERVED.test(part)) return `names ${JSON.stringify(part)}, which the service keeps for itself`;
  }
  return null;
}

/**
 * The checked path of a request (`''` for the top where `top` allows it), or 400 validation_failed at `pointer`.
 * `hidden`: top-level names the storage does not show (the console log's folder with RUNTIME=local).
 */
export function checkedPath(p: string | undefined, pointer: string, o: { top: boolean; hidden: readonly string[] }): string {
  const fail = (detail: string) => new AppError('validation_failed', `The path ${detail}.`, [{ pointer, detail: `The path ${detail}.` }]);
  if (p === undefined || p === '') {
    if (o.top) return '';
    throw fail('must name a file or folder below the top');
  }
  const why = nameProblem(p);
  if (why) throw fail(why);
  if (o.hidden.includes(p.split('/')[0])) throw new AppError('file_not_found', `There is no ${p}.`);
  return p;
}
