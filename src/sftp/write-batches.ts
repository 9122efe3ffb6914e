import type fs from 'node:fs';

/** The most bytes one positioned write carries. */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** The most buffers one writev(2) takes (Linux's IOV_MAX). */
const MAX_BUFFERS = 1024;

interface Pending {
  at: number;
  data: Buffer;
  done: (err?: Error) => void;
}

/** The writes of one staged file (session-writes.ts): `write` resolves once its bytes are in the file. */
export interface BatchedWrites {
  write(at: number, data: Buffer): Promise<void>;
  /** Resolves once every write asked for so far has ended (a CLOSE waits for them). */
  idle(): Promise<void>;
}

/**
 * An SFTP client sends a file as many WRITEs of 32 KiB, dozens outstanding (OpenSSH's sftp keeps 64), and each
 * positioned write is one request to libuv's thread pool. So while one write is under way the next ones wait, and
 * then go out together: each run of contiguous ones as one writev(2) at its offset, runs in the order their writes
 * came, so overlapping writes land as they would one by one (BENCHMARKS.md §13). A write answers only once its
 * bytes are in the file, as OpenSSH's sftp-server does; a failed run fails each of its writes.
 */
export function batchedWrites(fd: fs.promises.FileHandle): BatchedWrites {
  let queue: Pending[] = [];
  let running: Promise<void> | null = null;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      for (let i = 0; i < batch.length;) {
        let j = i + 1;
        let bytes = batch[i].data.length;
        while (j < batch.length && j - i < MAX_BUFFERS && bytes < MAX_BATCH_BYTES && batch[j].at === batch[j - 1].at + batch[j - 1].data.length) {
          bytes += batch[j].data.length;
          j++;
        }
        const run = batch.slice(i, j);
        const err = await writeAll(fd, run.map((p) => p.data), run[0].at, bytes).then(() => undefined, (e: unknown) => (e instanceof Error ? e : new Error(String(e))));
        for (const p of run) p.done(err);
        i = j;
      }
    }
    running = null;
  }

  return {
    write: (at, data) => new Promise<void>((resolve, reject) => {
      queue.push({ at, data, done: (err) => (err ? reject(err) : resolve()) });
      running ??= drain();
    }),
    idle: () => running ?? Promise.resolve(),
  };
}

/** All of `buffers` at `at`: one writev(2), and the rest again after a short write (rare for a file, not never). */
async function writeAll(fd: fs.promises.FileHandle, buffers: Buffer[], at: number, bytes: number): Promise<void> {
  let written = (await fd.writev(buffers, at)).bytesWritten;
  if (written === bytes) return;
  const rest = Buffer.concat(buffers);
  while (written < bytes) {
    const { bytesWritten } = await fd.write(rest, written, bytes - written, at + written);
    if (bytesWritten === 0) throw new Error('the file took no more bytes');
    written += bytesWritten;
  }
}
