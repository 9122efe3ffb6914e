// The checks every write of a server's files passes (openapi/v1.yaml tag Files; docs/architecture.md "Server
// files"), shared by the files service's reads, writes and archives (files.ts, file-extract.ts): a storage refusal as
// a problem, the files the service writes for each launch, the server's state, the plan's disk, one write at a time
// per server, recorded with its actor.
import { AppError, type ErrorCode } from '../../errors';
import type { FileChange } from '../../store/file-changes-repo';
import { FileOpError, type Expect } from '../host/storage';
import type { FilesDeps } from './files';

const MIB = 1024 * 1024;
/** Files a launcher makes from settings.json at each launch, besides settings.json and the lists file. */
const LAUNCHER_FILES: Record<string, string[]> = { luanti: ['minetest.conf'] };
const REFUSALS: Record<FileOpError['refusal'], ErrorCode> = {
  not_found: 'file_not_found', exists: 'file_conflict', not_a_folder: 'file_conflict', is_a_folder: 'file_conflict',
  symlink: 'file_conflict', not_empty: 'file_conflict', invalid: 'file_conflict', precondition: 'precondition_failed',
};

type Headers = Record<string, string | string[] | undefined>;

/** The storage's work, its refusals (FileOpError) turned into problems. */
export async function call<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof FileOpError) throw new AppError(REFUSALS[err.refusal], `${err.message}.`);
    throw err;
  }
}

/**
 * Whether `p` is one of the files the service writes for each launch: settings.json, the lists file, the launcher's.
 * The one rule: writes refuse them (readOnly below) and listings mark them (FileEntry.read_only, files.ts).
 */
export function isReadOnly(deps: Pick<FilesDeps, 'servers' | 'catalog'>, serverId: string, p: string): boolean {
  return readOnlyRule(deps, serverId)(p);
}

/** isReadOnly for many paths of one server (a listing's page): the server and its software looked up once. */
export function readOnlyRule(deps: Pick<FilesDeps, 'servers' | 'catalog'>, serverId: string): (p: string) => boolean {
  const software = deps.servers.find(serverId)?.software ?? '';
  const def = deps.catalog.get(software);
  const names = ['settings.json', ...(def.playerLists ? [def.playerLists.file] : []), ...(LAUNCHER_FILES[software] ?? [])];
  return (p) => names.includes(p);
}

/** Refuses a write of a file the service writes for each launch (isReadOnly): 403 file_read_only. */
export function readOnly(deps: Pick<FilesDeps, 'servers' | 'catalog'>, serverId: string, p: string): void {
  if (isReadOnly(deps, serverId, p)) throw new AppError('file_read_only', `${p} is written by the service before every launch; change it through the settings or player lists API.`);
}

/** A write may go ahead: not while the server is installed, moved, recovered (`gsh node lose`), restored or deleted. */
export function writable(deps: Pick<FilesDeps, 'doors'>, serverId: string): void {
  const door = deps.doors.of(serverId);
  if (['installing', 'deleting', 'unreachable'].includes(door.state)) throw new AppError('invalid_state', `The server is ${door.state}; its files cannot be changed now.`);
  if (door.has((c) => ['restore', 'move', 'recover', 'remove'].includes(c.kind))) throw new AppError('action_conflict', 'A restore, move, recovery or removal of the server is under way; its files cannot be changed now.');
}

/** A body's length from its Content-Length (RFC 9110 §8.6): required, and at most the upload limit. */
export function bodySize(deps: Pick<FilesDeps, 'maxUploadBytes'>, headers: Headers): number {
  const length = headers['content-length'];
  if (length === undefined || Array.isArray(length) || !/^\d+$/.test(length)) throw new AppError('length_required', 'Send the body with a Content-Length.');
  const n = Number(length);
  if (n > deps.maxUploadBytes) throw new AppError('payload_too_large', `The body may be at most ${deps.maxUploadBytes} bytes.`);
  return n;
}

/** An upload's precondition from its headers (RFC 9110 §13.1.1, §13.1.2); a weak tag never matches (strong comparison). */
export function expectOf(headers: Headers): Expect {
  if (headers['if-none-match'] === '*') return { absent: true };
  const match = headers['if-match'];
  if (typeof match !== 'string') return null;
  if (match.trim() === '*') return { any: true };
  return { etags: match.split(',').map((t) => t.trim()).filter((t) => t.startsWith('"')) };
}

/** Room held in a server's disk for bytes on their way (Files.reserve). */
export interface Reservation {
  /** Holds `bytes` in all (more than now: 507 unless the difference fits; fewer: nothing changes). */
  grow(bytes: number): void;
  /** Gives the room back (the bytes landed and were counted by `wrote`, or never will); again is a no-op. */
  release(): void;
}

/**
 * The plan's disk as the writes see it, and the writes of each server one after the other. `room`: the bytes left,
 * the plan less the last measurement, what this API wrote since (the disk watcher's walk comes later) and what is
 * held for writes under way (reservations, taken before their first byte so that writes side by side cannot
 * together pass the plan: each checks and holds in one synchronous step).
 */
export function createWriteGate(deps: Pick<FilesDeps, 'servers' | 'plans' | 'doors' | 'changes' | 'current'>) {
  const locks = new Map<string, Promise<unknown>>();
  /** Bytes written through this API since the server's last disk measurement (its `disk_measured_at`). */
  const written = new Map<string, { since: string | null; bytes: number }>();
  /** Bytes held by the reservations of each server. */
  const held = new Map<string, number>();

  function room(serverId: string): { limit: number; used: number } {
    const row = deps.servers.find(serverId);
    const limit = (deps.plans.find((p) => p.id === row?.plan)?.disk_mb ?? 0) * MIB;
    const w = written.get(serverId);
    const since = w && w.since === (row?.disk_measured_at ?? null) ? w.bytes : 0;
    return { limit, used: (row?.disk_used_mb ?? 0) * MIB + since + (held.get(serverId) ?? 0) };
  }

  const hold = (serverId: string, bytes: number) => {
    const total = (held.get(serverId) ?? 0) + bytes;
    if (total > 0) held.set(serverId, total);
    else held.delete(serverId);
  };

  /** 507 unless `bytes` more fit in the plan's disk. */
  function claim(serverId: string, bytes: number): void {
    const r = room(serverId);
    if (r.used + bytes > r.limit) {
      const left = Math.max(0, r.limit - r.used);
      throw new AppError('insufficient_storage', `This needs ${bytes} bytes and the plan's disk has ${left} left (${r.limit} in all).`, undefined, undefined, { limit: r.limit, used: r.used });
    }
  }

  return {
    room,
    claim,
    /**
     * `step`: bytes held ahead, for a caller that grows in many small steps (an SFTP session's 32 KiB writes): each
     * growth past the hold takes up to the next multiple of `step` when that fits, else exactly what it asks, so
     * the plan's disk is looked up once per `step` rather than per write and a write is refused only when its own
     * bytes do not fit.
     */
    reserve: (serverId: string, step = 0): Reservation => reservation((bytes) => claim(serverId, bytes), (bytes) => hold(serverId, bytes), step),
    /** Counts `bytes` written, until the next measurement. */
    wrote(serverId: string, bytes: number): void {
      const since = deps.servers.find(serverId)?.disk_measured_at ?? null;
      const w = written.get(serverId);
      written.set(serverId, { since, bytes: (w && w.since === since ? w.bytes : 0) + bytes });
      deps.servers.filesChanged(serverId);
    },
    /** Runs one write of a server after the previous one ended, then records it with its actor. */
    write<T>(serverId: string, change: (result: T) => Pick<FileChange, 'operation' | 'path' | 'to' | 'bytes'>, work: () => Promise<T>): Promise<T> {
      const actor = deps.current();
      const run = (locks.get(serverId) ?? Promise.resolve()).catch(() => undefined).then(async () => {
        writable(deps, serverId);
        const result = await call(work());
        deps.changes.record(serverId, actor, change(result));
        return result;
      });
      locks.set(serverId, run);
      void run.finally(() => locks.get(serverId) === run && locks.delete(serverId)).catch(() => undefined);
      return run;
    },
  };
}

export type WriteGate = ReturnType<typeof createWriteGate>;

/**
 * One reservation (WriteGate.reserve): `claim` refuses bytes that do not fit, `hold` counts bytes held (negative
 * gives them back). Each growth past the hold takes up to the next multiple of `step` when that fits, else exactly
 * what it asks.
 */
function reservation(claim: (bytes: number) => void, hold: (bytes: number) => void, step: number): Reservation {
  let mine = 0;
  let open = true;
  return {
    grow(bytes) {
      if (!open || bytes <= mine) return;
      const ahead = step > 0 ? Math.ceil(bytes / step) * step : bytes;
      let want = bytes;
      if (ahead > bytes) {
        try {
          claim(ahead - mine);
          want = ahead;
        } catch {
          // the step does not fit: exactly what is asked, refused with the room left if that does not fit either
        }
      }
      if (want === bytes) claim(bytes - mine);
      hold(want - mine);
      mine = want;
    },
    release() {
      if (!open) return;
      open = false;
      hold(-mine);
    },
  };
}
