import fs from 'node:fs';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar, { type Header } from 'tar-stream';

export type TarHeader = Partial<Header> & Pick<Header, 'name'>;
export type TarEntry = (header: TarHeader, content: Readable) => Promise<void>;

/**
 * Reads the tar stream `source` (tar-stream's extract), handing each entry to `entry` in order, which must read its
 * content to the end; resolves once the archive ended, rejects on the source's error, a damaged archive, or an
 * `entry` that throws (the rest is not read).
 */
export function forEachEntry(source: Readable, entry: TarEntry): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const extract = tar.extract();
    extract.on('entry', (header, content, next) => {
      entry(header, content as unknown as Readable).then(() => next(), (err: unknown) => extract.destroy(err as Error));
    });
    extract.once('finish', () => resolve());
    extract.once('error', reject);
    source.once('error', (err) => extract.destroy(err));
    source.pipe(extract);
  });
}

/** An entry's content read and dropped (for entries only looked at). */
export function skip(content: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    content.once('end', () => resolve());
    content.once('error', reject);
    content.resume();
  });
}

/** The content of a gzipped tar file, as a tar stream. */
export function gunzipped(file: string): Readable {
  const gunzip = zlib.createGunzip();
  const read = fs.createReadStream(file);
  read.once('error', (err) => gunzip.destroy(err));
  return read.pipe(gunzip);
}

/**
 * Writes tar entries into one new archive: `add` is called with a function that puts one entry (its content read
 * to the end); the returned stream is the archive, which errors when `add` rejects.
 */
export function repack(add: (put: TarEntry) => Promise<void>): Readable {
  const pack = tar.pack();
  const put: TarEntry = (header, content) =>
    new Promise((resolve, reject) => {
      const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
      sink.on('error', reject); // destroyed with the pack when `add` fails midway: an unheard 'error' ends the process
      content.once('error', reject);
      content.pipe(sink);
    });
  add(put).then(
    () => pack.finalize(),
    (err: unknown) => pack.destroy(err as Error),
  );
  return Readable.from(pack);
}
