import fs from 'node:fs';
import path from 'node:path';
import type { components } from '../../../generated/v1';
import type { Actor } from '../../actors';
import { hostPathMasks, pathMasker, stripTerminalControls, type PathMask } from '../software/console-text';

/**
 * One console line as the API shows it (the spec's ConsoleLine). `seq` increases by one per line of this server
 * and keeps increasing across service lives (it jumps ahead at a restart: see SEQ_BLOCK); `at` is RFC 3339 UTC.
 */
// Answers show `stream` and `actor` open (x-open-enum, OtherActor); the service's lines use the known sets.
export type ConsoleStream = components['schemas']['ConsoleStream'];
export type ConsoleLine = Omit<components['schemas']['ConsoleLine'], 'stream' | 'actor'> & { stream: ConsoleStream; actor: Actor | null };

/** ConsoleLine.text's maxLength in openapi/v1.yaml. */
export const MAX_LINE_CHARS = 10_000;

export type ConsoleListener = (line: ConsoleLine) => void;

/**
 * When the log file is rotated: before a line would take it past `maxBytes`, `console.log` becomes
 * `console.log.1` (`.1` becomes `.2`, …) and the oldest of `keep` old files is dropped, so a chatty game's log
 * takes at most (keep + 1) × maxBytes of its folder (docs/architecture.md "Disk").
 */
export interface LogRotation {
  maxBytes: number;
  /** At least 1: the current file always moves aside. */
  keep: number;
}

/**
 * How many sequence numbers a console reserves at once in its seq file (`logs/console.seq`): the file holds the
 * highest number reserved, written before the first line past it, so a new service life (even after a crash)
 * starts above every number the last one used. A client resuming a console stream with a `Last-Event-ID` from
 * before a restart then gets every line buffered since (issue 42 §4; openapi/v1.yaml streamServerConsole). One
 * small write per 1,000 lines; a restart skips at most 1,000 numbers, so int32 (ConsoleLine.seq) lasts 2 million
 * restarts of a quiet server.
 */
export const SEQ_BLOCK = 1000;

/** A server's log: 1 MiB files, the current and two old ones (openapi/v1.yaml, getServerConsole). */
export const CONSOLE_LOG_ROTATION: LogRotation = { maxBytes: 1024 * 1024, keep: 2 };

/**
 * One server's console: a bounded ring buffer that drops the oldest line when full (as Wings' sink pool does, so
 * a chatty game cannot grow the service's memory), fanned out to subscribers and appended to a rotated log file
 * (so it cannot fill the server's disk either).
 */
export class ConsoleBuffer {
  /**
   * Up to `capacity` slots used as a ring: the oldest held line is at `head`, the newest `count - 1` slots after it.
   * It grows with the lines pushed, so a console nothing was printed to costs no slots (docs/architecture.md
   * "At scale").
   */
  private readonly slots: ConsoleLine[] = [];
  private readonly capacity: number;
  private head = 0;
  private count = 0;
  private readonly listeners = new Set<ConsoleListener>();
  private nextSeq = 1;
  /** The highest sequence number the seq file reserves (0: none yet). */
  private reserved = 0;
  private file: fs.WriteStream | null = null;
  /** Bytes in the current log file, counted as they are queued. */
  private fileBytes = 0;
  /** Rotated-out files still flushing, so close() can wait for them. */
  private readonly retiring = new Set<Promise<void>>();
  private readonly maskPaths: (text: string) => string;

  /** `masks`: the host's folders that lines show replaced (console-text.ts hostPathMasks). */
  constructor(
    capacity: number,
    private readonly logFile: string | null,
    private readonly now: () => string,
    masks: readonly PathMask[] = [],
    private readonly rotation: LogRotation = CONSOLE_LOG_ROTATION,
    private readonly seqFile: string | null = null,
  ) {
    this.capacity = Math.max(0, Math.floor(capacity) || 0);
    this.maskPaths = pathMasker(masks);
    if (seqFile) this.nextSeq = (this.reserved = readReserved(seqFile)) + 1;
  }

  /**
   * Records one line. Its text is stored without terminal controls and with the masked folders replaced
   * (console-text.ts), whoever produced it: an Environment may pass a game's escape sequences through, a system
   * line may quote a path, and the stored text reaches API clients and operators' terminals. `actor`: who sent an
   * `input` line (src/actors.ts), recorded with it (its token, if any, in the log file too); null for every other
   * line.
   */
  push(stream: ConsoleStream, text: string, actor: Actor | null = null): ConsoleLine {
    // The spec bounds ConsoleLine.text (and a crash's last_lines) at MAX_LINE_CHARS; a longer game line is cut.
    const clean = this.maskPaths(stripTerminalControls(text)).slice(0, MAX_LINE_CHARS);
    const tokenId = actor?.type === 'user' ? actor.token_id : null;
    if (this.seqFile && this.nextSeq > this.reserved) this.reserve(this.seqFile);
    const line: ConsoleLine = { seq: this.nextSeq++, at: this.now(), stream, text: clean, token_id: tokenId, actor };
    this.store(line);
    this.appendToFile(line);
    for (const fn of this.listeners) {
      try {
        fn(line);
      } catch {
        // A subscriber's failure (a closed SSE socket) must not stop the game's console for the others.
      }
    }
    return line;
  }

  /** The newest `limit` lines, oldest first. */
  recent(limit: number): ConsoleLine[] {
    // Same rounding as Array.prototype.slice on the newest-`limit` start index: NaN means all, fractions truncate.
    const from = Math.max(0, this.count - Math.max(0, limit));
    const start = Number.isNaN(from) ? 0 : Math.trunc(from);
    const out = new Array<ConsoleLine>(this.count - start);
    for (let i = start; i < this.count; i++) out[i - start] = this.at(i);
    return out;
  }

  /** The last `n` lines as text, for crash records. */
  lastTexts(n: number): string[] {
    return this.recent(n).map((l) => l.text);
  }

  /**
   * Calls `fn` for every new line. With `afterSeq`, first replays the buffered lines after it (an SSE client
   * resuming with Last-Event-ID); lines older than the buffer are gone. Returns the unsubscribe function.
   */
  subscribe(fn: ConsoleListener, afterSeq?: number): () => void {
    // A snapshot, so a line pushed by `fn` during the replay cannot overwrite a slot not yet replayed.
    if (afterSeq !== undefined) for (const line of this.recent(this.count)) if (line.seq > afterSeq) fn(line);
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /**
   * Whether every line after `afterSeq` is still held (none has left the ring yet), so that a subscriber resuming
   * after it misses nothing: an event stream whose client stopped reading resumes this way (src/http/sse.ts).
   */
  holdsAllAfter(afterSeq: number): boolean {
    const oldest = this.count > 0 ? this.at(0).seq : this.nextSeq;
    return afterSeq + 1 >= oldest;
  }

  /** Closes the log file; resolves once it (and any rotated-out file) is flushed and its descriptor closed. */
  async close(): Promise<void> {
    this.listeners.clear();
    await this.closeFile();
  }

  /**
   * Closes the log file but keeps the lines and the subscribers: the next line opens it again. For a console kept
   * while its server has no door (doors.ts), so a stopped server holds no file descriptor.
   */
  async closeFile(): Promise<void> {
    const file = this.file;
    this.file = null;
    if (file) this.retire(file);
    await Promise.all([...this.retiring]);
  }

  /** True while nothing is held and nobody listens: dropping this console loses nothing. */
  get empty(): boolean {
    return this.count === 0 && this.listeners.size === 0;
  }

  /** Ends a log file stream; the promise settles once it is flushed and closed. */
  private retire(file: fs.WriteStream): void {
    const done = new Promise<void>((resolve) => {
      if (file.closed) {
        resolve();
        return;
      }
      // 'close' follows 'finish' (all data written) and, on a write error, the error: it always comes.
      file.once('close', () => resolve());
      file.end();
    });
    this.retiring.add(done);
    void done.then(() => this.retiring.delete(done));
  }

  /**
   * Writes the next block's end to the seq file (a new file renamed over the old, so a crash leaves one or the
   * other whole). Best effort, as the log file: a folder that is gone (server being deleted) stops nothing.
   */
  private reserve(seqFile: string): void {
    this.reserved = this.nextSeq - 1 + SEQ_BLOCK;
    try {
      fs.writeFileSync(`${seqFile}.new`, `${this.reserved}\n`);
      fs.renameSync(`${seqFile}.new`, seqFile);
    } catch {
      // The next block tries again.
    }
  }

  /** The `i`-th held line, 0 being the oldest. */
  private at(i: number): ConsoleLine {
    return this.slots[(this.head + i) % this.slots.length];
  }

  /**
   * Appends until `capacity` lines are held (head stays 0); from then on writes into the slot after the newest,
   * which is the oldest's, so the oldest is dropped.
   */
  private store(line: ConsoleLine): void {
    if (this.capacity === 0) return;
    if (this.count < this.capacity) {
      this.slots.push(line);
      this.count++;
      return;
    }
    this.slots[this.head] = line;
    this.head = (this.head + 1) % this.capacity;
  }

  private appendToFile(line: ConsoleLine): void {
    if (!this.logFile) return;
    const by = line.actor === null ? null : line.actor.type === 'user' ? line.actor.token_id : (line.actor.schedule_id ?? line.actor.cause);
    const source = by ? `${line.stream} ${by}` : line.stream;
    const text = `${line.at} [${source}] ${line.text}\n`;
    const bytes = Buffer.byteLength(text);
    if (!this.file) this.file = this.openLogFile(this.logFile);
    if (this.file && this.fileBytes > 0 && this.fileBytes + bytes > this.rotation.maxBytes) this.rotate(this.logFile);
    if (!this.file) return;
    this.file.write(text);
    this.fileBytes += bytes;
  }

  /**
   * Shifts the files by one (the oldest is replaced) and opens a new, empty log. The old stream's queued writes
   * still land in its file: a rename keeps the file an open descriptor writes to (POSIX rename(2)).
   */
  private rotate(logFile: string): void {
    if (this.file) this.retire(this.file);
    this.file = null;
    const name = (i: number) => (i === 0 ? logFile : `${logFile}.${i}`);
    for (let i = this.rotation.keep; i >= 1; i--) {
      try {
        fs.renameSync(name(i - 1), name(i));
      } catch {
        // That file does not exist yet (or the folder is gone: the next open fails and the buffer goes on).
      }
    }
    this.file = this.openLogFile(logFile);
  }

  /**
   * Opens the file synchronously, so it exists as soon as the first push returns (fs.createWriteStream with a
   * path opens it later, on the event loop). Null when the folder is gone (server being deleted): the ring buffer
   * still works, the file is best effort, and the next push tries again.
   */
  private openLogFile(logFile: string): fs.WriteStream | null {
    let fd: number;
    try {
      fd = fs.openSync(logFile, 'a');
    } catch {
      return null;
    }
    this.fileBytes = fs.fstatSync(fd).size; // a new service life appends to what the last one wrote
    // With `fd` the stream does not open `logFile` again; it closes `fd` when it ends or fails.
    const file = fs.createWriteStream(logFile, { fd });
    file.on('error', () => {
      if (this.file === file) this.file = null;
    });
    return file;
  }
}

/** The highest sequence number a seq file reserves; 0 when there is none (a new server) or it cannot be read. */
function readReserved(seqFile: string): number {
  try {
    const n = Number(fs.readFileSync(seqFile, 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

/** How many lines a server's console holds (docs/architecture.md "Streams"). */
const SERVER_CONSOLE_LINES = 1000;

/**
 * One server's console: the newest 1,000 lines, appended to `logs/console.log` in its folder (rotated at
 * CONSOLE_LOG_ROTATION), with its folder and DATA_DIR masked in every line (console-text.ts hostPathMasks), its
 * sequence numbers reserved in `logs/console.seq` so they survive a restart (SEQ_BLOCK).
 */
export function serverConsole(serverDir: string, dataDir: string, now: () => number): ConsoleBuffer {
  const logFile = path.join(serverDir, 'logs', 'console.log');
  const at = () => new Date(now()).toISOString();
  const seqFile = path.join(serverDir, 'logs', 'console.seq');
  return new ConsoleBuffer(SERVER_CONSOLE_LINES, logFile, at, hostPathMasks(serverDir, dataDir), CONSOLE_LOG_ROTATION, seqFile);
}
