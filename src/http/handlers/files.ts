import rangeParser from 'range-parser';
import { AppError } from '../../errors';
import type { Files } from '../../runtime/services/files';
import type { Handlers } from '../types';

/**
 * Files tag (openapi/v1.yaml): listServerFiles, getServerFile, downloadServerFile, uploadServerFile,
 * createServerFolder, moveServerFile, deleteServerFile, downloadServerFolder, extractServerArchive,
 * listServerFileActivity. Each is one call of the files service (src/runtime/services/files.ts).
 */
export function fileHandlers(deps: { files: Files }): Handlers {
  const { files } = deps;
  return {
    listServerFiles: async ({ server, query }) => ({ status: 200, body: await files.list(server.id, query.path, query.limit ?? 100, query.starting_after) }),
    getServerFile: async ({ server, query }) => ({ status: 200, body: await files.stat(server.id, query.path) }),
    downloadServerFile: async ({ server, query, headers }) => {
      const { entry, content, part } = await files.read(server.id, query.path, (size, etag) => rangeOf(headers, size, etag));
      const common = { ETag: entry.etag ?? '', 'Accept-Ranges': 'bytes' };
      return { status: 200, content, contentType: 'application/octet-stream', headers: common, length: entry.size, part: part && { ...part, size: entry.size } };
    },
    uploadServerFile: async ({ server, query, headers, raw }) => {
      const { entry, created } = await files.upload(server.id, query.path, raw, headers);
      return created ? { status: 201, body: entry } : { status: 200, body: entry };
    },
    createServerFolder: async ({ server, body }) => ({ status: 201, body: await files.mkdir(server.id, body.path) }),
    moveServerFile: async ({ server, body }) => ({ status: 200, body: await files.move(server.id, body.from, body.to) }),
    deleteServerFile: async ({ server, query }) => {
      await files.remove(server.id, query.path, query.recursive ?? false);
      return { status: 204, body: undefined };
    },
    downloadServerFolder: async ({ server, query }) => {
      const format = query.format ?? 'tar.gz';
      const content = await files.archive(server.id, query.path, format);
      const base = (query.path ?? '').split('/').pop() || server.id;
      return {
        status: 200, content, contentType: format === 'zip' ? 'application/zip' : 'application/gzip',
        headers: { 'Content-Disposition': `attachment; filename="${base.replace(/[^\w.-]/g, '_').slice(0, 80)}.${format}"` },
      };
    },
    extractServerArchive: async ({ server, query, headers, raw }) => ({
      status: 200,
      body: await files.extract(server.id, query.path, raw, headers, query.strip_components ?? 0, query.replace ?? 'none'),
    }),
    listServerFileActivity: ({ server, principal, query }) => {
      const { data, hasMore } = files.activity(server.id, principal.userId, query.limit ?? 20, query.starting_after ?? null);
      return { status: 200, body: { data, has_more: hasMore, next_cursor: hasMore ? data[data.length - 1].id : null } };
    },
  };
}

/**
 * The one byte range a download answers (RFC 9110 §14.2), or undefined for the whole file: none asked, several, not
 * bytes, or an If-Range naming another entity tag (§13.1.5). A range past the end is a 416.
 */
function rangeOf(headers: Record<string, string | string[] | undefined>, size: number, etag: string | null): { start: number; end: number } | undefined {
  const header = headers.range;
  if (typeof header !== 'string') return undefined;
  const ifRange = headers['if-range'];
  if (typeof ifRange === 'string' && ifRange !== etag) return undefined;
  const asked = rangeParser(size, header, { combine: true });
  if (asked === -1) throw new AppError('range_not_satisfiable', `The file has ${size} bytes; the range ${header.slice(0, 100)} is not within it.`, undefined, { 'Content-Range': `bytes */${size}` });
  if (asked === -2 || asked.type !== 'bytes' || asked.length !== 1) return undefined;
  return { start: asked[0].start, end: asked[0].end };
}
