import fs from 'node:fs';

export type ConsoleStream = 'stdout' | 'stderr' | 'system' | 'input';

export interface ConsoleLine {
  /** Increases by one per line of this server within one service life (it restarts at 1 when the service does). */
  seq: number;
  /** RFC 3339 UTC. */
  at: string;
  stream: ConsoleStream;
  text: string;
}

export type ConsoleListener = (line: ConsoleLine) => void;

/**
 * One server's console: a bounded ring buffer that drops the oldest line when full (as Wings' sink pool does, so
 * a chatty game cannot grow the service's memory), fanned out to subscribers and appended to logs/console.log.
 */
export class ConsoleBuffer {
  private readonly lines: ConsoleLine[] = [];
  private readonly listeners = new Set<ConsoleListener>();
  private nextSeq = 1;
  private file: fs.WriteStream | null = null;

  constructor(
    private readonly capacity: number,
    private readonly logFile: string | null,
    private readonly now: () => string,
  ) {}

  push(stream: ConsoleStream, text: string): ConsoleLine {
    const line: ConsoleLine = { seq: this.nextSeq++, at: this.now(), stream, text };
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.shift();
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
    return this.lines.slice(Math.max(0, this.lines.length - Math.max(0, limit)));
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
    if (afterSeq !== undefined) for (const line of this.lines) if (line.seq > afterSeq) fn(line);
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Closes the log file; resolves when it is flushed. */
  close(): Promise<void> {
    const file = this.file;
    this.file = null;
    this.listeners.clear();
    return new Promise((resolve) => (file ? file.end(resolve) : resolve()));
  }

  private appendToFile(line: ConsoleLine): void {
    if (!this.logFile) return;
    if (!this.file) {
      this.file = fs.createWriteStream(this.logFile, { flags: 'a' });
      // The folder may be gone (server being deleted); the ring buffer still works, the file is best effort.
      this.file.on('error', () => (this.file = null));
    }
    this.file.write(`${line.at} [${line.stream}] ${line.text}\n`);
  }
}
