import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../../src/store/db';

/** A clock the test moves by hand. */
export function manualClock(startMs: number) {
  let now = startMs;
  return {
    now: () => now,
    set: (ms: number) => void (now = ms),
    advance: (ms: number) => void (now += ms),
  };
}

/** A fresh SQLite file in its own temp dir, with every migration applied; `cleanup` closes and removes it. */
export function freshDb(): { db: Db; file: string; reopen: () => Db; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-'));
  const file = path.join(dir, 'test.db');
  const state = { db: openDb(file) };
  return {
    get db() {
      return state.db;
    },
    file,
    reopen() {
      state.db.close();
      state.db = openDb(file);
      return state.db;
    },
    cleanup() {
      if (state.db.open) state.db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
