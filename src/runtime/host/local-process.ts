// One child process of the local environment as a GameProcess (environment.ts states the contract).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { stripTerminalControls } from '../software/console-text';
import type { ExitInfo, GameProcess, OutputStream } from './environment';

const CLOSE_GRACE_MS = 500;

export interface WrapOptions {
  /** The game's argv, as /proc/<pid>/cmdline shows it once any wrapper has exec'd into it. */
  argv: string[];
  /** See GameProcess.enforcesMemory. */
  enforcesMemory: boolean;
  /** Runs once after the exit, before `exited` resolves: releases what the process held; may add to its exit. */
  release: (exit: ExitInfo) => Promise<ExitInfo>;
}

export function wrapChild(child: ChildProcess, options: WrapOptions): GameProcess {
  const { pid, stdin, stdout, stderr } = child;
  // spawnGame (local-environment.ts) wraps a child once it spawned, its stdio piped: each of these is there
  if (pid === undefined || !stdin || !stdout || !stderr) throw new Error('wrapChild needs a spawned child with piped stdio');
  const killAll = () => killGroup(pid, child);
  const lineFns: ((stream: OutputStream, text: string) => void)[] = [];
  const messageFns: ((msg: unknown) => void)[] = [];
  let alive = true;
  const emitLine = (stream: OutputStream, text: string) => {
    for (const fn of lineFns) fn(stream, text);
  };
  splitLines(stdout, (t) => emitLine('stdout', t));
  splitLines(stderr, (t) => emitLine('stderr', t));
  child.on('message', (msg) => {
    for (const fn of messageFns) fn(msg);
  });
  stdin.on('error', () => undefined); // writing to a dying process: the exit tells the story
  const exited = exitOf(child, options.release, () => (alive = false));
  return {
    pid,
    cmdline: options.argv,
    exited,
    enforcesMemory: options.enforcesMemory,
    isAlive: () => alive,
    sendCommand(text) {
      if (!alive || !child.stdin || child.stdin.destroyed || !child.stdin.writable) {
        throw new Error('the process has exited');
      }
      child.stdin.write(text + '\n');
    },
    async stop(stopCommand, timeoutMs) {
      if (!alive) return { ...(await exited), forced: false };
      return stopOrKill(stdin, killAll, exited, stopCommand, timeoutMs);
    },
    async kill() {
      if (alive) killAll();
      return exited;
    },
    rssBytes: () => readRss(pid),
    onLine: (fn) => void lineFns.push(fn),
    onMessage: (fn) => void messageFns.push(fn),
  };
}

/**
 * The child's exit, once its output is in and `release` has run; `gone` is called at that moment (before
 * `exited` resolves), so isAlive() turns false with it.
 */
function exitOf(child: ChildProcess, release: WrapOptions['release'], gone: () => void): Promise<ExitInfo> {
  return new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      // 'close' comes once stdout/stderr are drained, so the last lines are in before anyone reads them; a
      // grandchild holding the pipes open must not delay the exit for long.
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        gone();
        release({ code, signal }).then(resolve, () => resolve({ code, signal }));
      };
      const timer = setTimeout(finish, CLOSE_GRACE_MS);
      child.once('close', () => {
        clearTimeout(timer);
        finish();
      });
    });
  });
}

/** GameProcess.stop on a live child: the stop command, then the whole process group killed after timeoutMs. */
async function stopOrKill(stdin: Writable, kill: () => void, exited: Promise<ExitInfo>, stopCommand: string, timeoutMs: number) {
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    kill();
  }, timeoutMs);
  try {
    stdin.write(stopCommand + '\n');
  } catch {
    forced = true;
    kill();
  }
  const exit = await exited;
  clearTimeout(timer);
  return { ...exit, forced };
}

/** SIGKILL to the child's process group (it was spawned detached, so its pid is the group's), else to the child. */
function killGroup(pid: number, child: ChildProcess): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function splitLines(stream: NodeJS.ReadableStream, onLine: (text: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? ''; // split gives at least one part: the text after the last newline
    for (const p of parts) onLine(stripTerminalControls(p));
  });
  stream.on('end', () => {
    if (partial) onLine(stripTerminalControls(partial));
    partial = '';
  });
}

/** VmRSS from /proc/<pid>/status (proc(5)), in bytes. */
function readRss(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
