// Archives in and out of a server's files (openapi/v1.yaml tag Files, extractServerArchive and downloadServerFolder):
// an uploaded .zip or .tar.gz checked whole before a byte of it reaches the files, then read again as one tar stream
// of checked entries; a folder's tar stream written out as .tar.gz or .zip. Zip through yauzl (reads the central
// directory with random access, so every entry's declared size is known before anything is unpacked, and enforces
// those sizes while inflating) and yazl (writes a zip as a stream, zip64 when needed); tar through tar-stream.
import fs from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { AppError, messageOf } from '../../errors';
import { forEachEntry, gunzipped, repack, skip, type TarEntry } from '../host/tar-entries';
import { nameProblem } from './file-paths';

/** Bounds on what one archive may unpack to (zip bombs, entry floods). */
export const ARCHIVE_LIMITS = { entries: 100_000, ratio: 100 };

export interface CheckedEntry {
  /** The name after strip_components, `/`-separated, no trailing slash. */
  name: string;
  type: 'file' | 'directory';
  size: number;
}

export interface CheckedArchive {
  format: 'zip' | 'tar.gz';
  entries: CheckedEntry[];
  bytes: number;
}

const unsafe = (detail: string) => new AppError('unsafe_archive', detail);

/** The archive's format from its first bytes: a zip's local header, or gzip's magic number. */
export async function formatOf(file: string): Promise<'zip' | 'tar.gz'> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead >= 4 && buffer.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 2 && buffer[0] === 0x1f && buffer[1] === 0x8b) return 'tar.gz';
  } finally {
    await handle.close();
  }
  throw unsafe('The body is neither a zip nor a gzipped tar.');
}

/**
 * Checks every entry of the archive before anything is written: plain files and folders only, safe relative names,
 * no duplicate (nor a file where a folder is named), at most ARCHIVE_LIMITS entries, an unpacked size within `room`
 * bytes (else 507 through `tooBig`) and at most ARCHIVE_LIMITS.ratio times the archive's own size.
 */
export async function checkArchive(file: string, strip: number, room: number, tooBig: (bytes: number) => Error): Promise<CheckedArchive> {
  const format = await formatOf(file);
  const packed = (await fs.promises.stat(file)).size;
  const seen = new Map<string, 'file' | 'directory'>();
  const entries: CheckedEntry[] = [];
  let bytes = 0;
  const add = (rawName: string, type: string, size: number) => {
    if (type !== 'file' && type !== 'directory') throw unsafe(`The entry ${JSON.stringify(rawName.slice(0, 200))} is a link or a special file; only plain files and folders can be extracted.`);
    const name = entryName(rawName, strip);
    if (name === null) return;
    if (entries.length >= ARCHIVE_LIMITS.entries) throw unsafe(`The archive holds more than ${ARCHIVE_LIMITS.entries} entries.`);
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) {
      const above = parts.slice(0, i).join('/');
      if (seen.get(above) === 'file') throw unsafe(`The entry ${JSON.stringify(name)} is inside ${JSON.stringify(above)}, which is a file.`);
      if (!seen.has(above)) seen.set(above, 'directory');
    }
    const before = seen.get(name);
    if (before && (before === 'file' || type === 'file')) throw unsafe(`The archive holds ${JSON.stringify(name)} twice.`);
    seen.set(name, type);
    bytes += size;
    if (bytes > room) throw tooBig(bytes);
    if (bytes > Math.max(packed, 1) * ARCHIVE_LIMITS.ratio) throw unsafe(`The archive unpacks to more than ${ARCHIVE_LIMITS.ratio} times its size (a zip bomb?).`);
    entries.push({ name, type, size });
  };
  if (format === 'zip') await zipEntries(file, (e) => add(e.fileName, zipType(e), e.uncompressedSize));
  else await forEachEntry(gunzipped(file), async (h, content) => {
    // A refused entry's content is destroyed with the refusal (forEachEntry): heard here, not left unhandled.
    content.on('error', () => undefined);
    add(h.name, h.type ?? 'file', h.size ?? 0);
    await skip(content);
  }).catch((err: unknown) => Promise.reject(err instanceof AppError ? err : unsafe(`The archive is damaged: ${messageOf(err)}`)));
  return { format, entries, bytes };
}

/** The entry's name after `strip` leading folders (null: nothing left), or unsafe_archive for an unsafe one. */
function entryName(raw: string, strip: number): string | null {
  const problem = raw.includes('\\') ? 'holds a backslash' : raw.startsWith('/') ? 'is absolute' : null;
  const trimmed = raw.replace(/\/+$/, '').replace(/^(\.\/)+/, '');
  const parts = trimmed === '' || trimmed === '.' ? [] : trimmed.split('/');
  const why = problem ?? (parts.length > 0 ? nameProblem(trimmed) : null);
  if (why) throw unsafe(`The entry ${JSON.stringify(raw.slice(0, 200))} ${why}.`);
  const kept = parts.slice(strip);
  return kept.length === 0 ? null : kept.join('/');
}

/** A zip entry's kind: a folder by its trailing slash, a link or special file by the Unix mode in its attributes. */
function zipType(e: yauzl.Entry): string {
  const mode = (e.externalFileAttributes >>> 16) & 0o170000;
  if (mode !== 0 && mode !== 0o100000 && mode !== 0o040000) return 'special';
  return e.fileName.endsWith('/') || mode === 0o040000 ? 'directory' : 'file';
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) =>
      err ? reject(unsafe(`The zip is damaged: ${err.message}`)) : resolve(zip), // yauzl: no error, a zip
    ),
  );
}

/** Each entry of the zip's central directory, in order; `each` may open its content (returned promise awaited). */
async function zipEntries(file: string, each: (e: yauzl.Entry, zip: yauzl.ZipFile) => unknown): Promise<void> {
  const zip = await openZip(file);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (e: yauzl.Entry) => {
        Promise.resolve()
          .then(() => {
            if (e.isEncrypted()) throw unsafe(`The entry ${JSON.stringify(e.fileName.slice(0, 200))} is encrypted.`);
            return each(e, zip);
          })
          .then(() => zip.readEntry(), reject);
      });
      zip.once('end', resolve);
      zip.once('error', (err: Error) => reject(err instanceof AppError ? err : unsafe(`The zip is damaged: ${err.message}`)));
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

/**
 * The checked archive's entries as one tar stream (names after strip_components, prefixed by `prefix`), read again
 * from the file: a zip's entries inflated one at a time with their declared sizes enforced (yauzl).
 */
export function asTar(file: string, checked: CheckedArchive, strip: number, prefix: string): Readable {
  const named = (raw: string) => {
    const name = entryName(raw, strip);
    return name === null ? null : prefix + name;
  };
  return repack(async (put) => {
    if (checked.format === 'tar.gz') {
      await forEachEntry(gunzipped(file), async (h, content) => {
        const name = named(h.name);
        if (name === null) return skip(content);
        await put({ name, type: h.type, size: h.size, mode: h.type === 'directory' ? 0o755 : 0o644, mtime: h.mtime }, content);
      });
      return;
    }
    await zipEntries(file, async (e, zip) => {
      const name = named(e.fileName);
      if (name === null) return;
      const type = zipType(e) as 'file' | 'directory';
      if (type === 'directory') return put({ name, type, mode: 0o755 }, Readable.from([]));
      const content = await new Promise<Readable>((resolve, reject) => zip.openReadStream(e, (err, s) => (err ? reject(err) : resolve(s))));
      await put({ name, type, size: e.uncompressedSize, mode: 0o644, mtime: e.getLastModDate() }, content);
    });
  });
}

/**
 * `out`, which ends `source` when it closes, however: a client that stops reading an archive (sendContent destroys
 * the answer) would otherwise leave the storage's source paused for good, and with it a `tar` process here or a
 * helper container on a node.
 */
function endsSource<T extends Readable>(out: T, source: Readable): T {
  out.once('close', () => source.destroy());
  return out;
}

/**
 * A folder's tar stream (storage.ts fileExportFolder: entries `<name>/…`) as the archive a customer downloads:
 * names relative to the folder, plain files and folders only, nothing hidden (`hidden` tells).
 */
export function folderArchive(source: Readable, format: 'zip' | 'tar.gz', hidden: (name: string) => boolean): Readable {
  const each = (put: TarEntry) =>
    forEachEntry(source, async (h, content) => {
      const name = h.name.split('/').slice(1).join('/').replace(/\/+$/, '');
      if (name === '' || (h.type !== 'file' && h.type !== 'directory') || hidden(name)) return skip(content);
      await put({ ...h, name: h.type === 'directory' ? `${name}/` : name }, content);
    });
  if (format === 'tar.gz') return endsSource(repack(each).pipe(zlib.createGzip()), source);
  const zip = new yazl.ZipFile();
  const out = endsSource(new PassThrough(), source);
  zip.outputStream.pipe(out);
  zip.outputStream.once('error', (err: Error) => out.destroy(err));
  each(async (h, content) => {
    if (h.type === 'directory') {
      zip.addEmptyDirectory(h.name, { mtime: h.mtime });
      return skip(content);
    }
    // yazl reads each stream in its turn: the next tar entry is read only once this one went through.
    const body = new PassThrough();
    zip.addReadStream(body, h.name, { mtime: h.mtime, size: h.size, mode: 0o100644 });
    await new Promise<void>((resolve, reject) => {
      body.once('end', resolve);
      content.once('error', reject);
      content.pipe(body);
    });
  }).then(() => zip.end(), (err: unknown) => out.destroy(err as Error));
  return out;
}
