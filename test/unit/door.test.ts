// One door per server (issue 26 §1; src/runtime/server/door.ts): commands run one at a time in the order submitted, what
// holds the server is what the queue holds, kill (and the removal, the shutdown) overtakes, and `begin` is done at
// once. The door is pure scheduling, so it is tested here with commands that record what they see; the runtime
// and integration tests drive it with real games.
import { ServerDoor, type Command, type CommandContext } from '../../src/runtime/server/door';
import type { SupervisorDeps } from '../../src/runtime/server/server-supervisor';
import { runtimeConfigDefaults } from '../../src/runtime/server/types';
import type { Failure } from '../../src/store/actions-repo';
import { createActors, serviceActor } from '../../src/actors';

/** The supervisor the door makes: these commands never touch it, and its console file is never opened. */
const supervisor = { config: { ...runtimeConfigDefaults, dataDir: '/nonexistent' }, now: () => 0 } as unknown as SupervisorDeps;

function door(errors: string[] = []) {
  const work: Promise<unknown>[] = [];
  const d = new ServerDoor('srv_door1', 'stopped', supervisor, {
    crashPolicy: { scheduleRestart: () => null },
    isClosing: () => false,
    log: { info: () => undefined, warn: () => undefined, error: (msg) => void errors.push(msg) },
    track: (p) => void work.push(p),
    actors: createActors(serviceActor('unknown')),
  });
  return { door: d, settled: () => Promise.allSettled(work) };
}

/** A command whose run waits until the test lets it end, recording when it began and what its context said. */
function held(kind: Command['kind'], log: string[], extra: Partial<Command> = {}) {
  let end!: (failure: Failure | null) => void;
  const ended = new Promise<Failure | null>((r) => (end = r));
  let ctx: CommandContext | undefined;
  const command: Command = {
    kind,
    holds: true,
    ...extra,
    run: async (_server, c) => {
      ctx = c;
      log.push(`${kind} began`);
      const failure = await ended;
      log.push(`${kind} ended`);
      return failure;
    },
  };
  return { command, end, context: () => ctx };
}

const tick = () => new Promise((r) => setImmediate(r));

test('commands run one at a time, in the order submitted, never in the caller\'s tick', async () => {
  const log: string[] = [];
  const { door: d } = door();
  const a = held('start', log);
  const b = held('stop', log);
  void d.submit(a.command);
  void d.submit(b.command);
  expect(log).toEqual([]); // not inside submit: a caller's transaction has returned before anything runs
  await tick();
  expect(log).toEqual(['start began']);
  a.end(null);
  await tick();
  await tick();
  expect(log).toEqual(['start began', 'start ended', 'stop began']);
  b.end(null);
});

test('what holds the server is the queue: a holding command waiting or running; an install holds nothing', async () => {
  const log: string[] = [];
  const { door: d } = door();
  const install = held('install', log, { holds: false });
  const start = held('start', log, { actionId: 'act_1' });
  void d.submit(install.command);
  expect([d.holder(), d.idle]).toEqual([null, false]);
  void d.submit(start.command);
  expect(d.holder()?.actionId).toBe('act_1'); // waiting behind the install, it already holds the server
  install.end(null);
  await tick();
  await tick();
  expect(d.holder()?.actionId).toBe('act_1');
  start.end(null);
  await tick();
  expect([d.holder(), d.idle]).toEqual([null, true]);
});

test('kill overtakes: what waits is cancelled, what runs is told, and what comes after waits for both', async () => {
  const log: string[] = [];
  const { door: d } = door();
  const backup = held('backup', log);
  const restart = held('restart', log, { actionId: 'act_2' });
  const cancelled: string[] = [];
  const restartDone = d.submit({ ...restart.command, cancelled: () => void cancelled.push('restart') });
  const backupDone = d.submit({ ...backup.command, cancelled: (by) => void cancelled.push(`backup by ${by.actionId}`) });
  await tick(); // the restart runs, the backup waits behind it
  const kill = held('kill', log, { overtakes: true, actionId: 'act_3' });
  void d.submit(kill.command);
  expect(restart.context()?.overtaken).toBe(true);
  await tick();
  expect(log).toEqual(['restart began', 'kill began']); // past the lock, while the restart still runs
  expect(d.holder()?.actionId).toBe('act_3'); // an overtaken command holds nothing
  const after = held('start', log);
  void d.submit(after.command);
  kill.end(null);
  await tick();
  expect(log).toEqual(['restart began', 'kill began', 'kill ended']); // the start waits for the restart too
  restart.end(null);
  await restartDone;
  await tick();
  expect(log).toEqual(['restart began', 'kill began', 'kill ended', 'restart ended', 'start began']);
  expect(log).not.toContain('backup began'); // it was waiting: cancelled, never run
  expect(cancelled).toEqual(['backup by act_3']); // the restart was running: told, not cancelled
  expect(await backupDone).toEqual({ code: 'action_cancelled', detail: 'Overtaken by kill act_3.' });
  after.end(null);
});

test('a command cancelled while it waits resolves action_cancelled, naming what overtook it', async () => {
  const log: string[] = [];
  const { door: d } = door();
  const first = held('start', log);
  void d.submit(first.command);
  const cancelledBy: string[] = [];
  const waiting = d.submit({ ...held('backup', log).command, cancelled: (by) => void cancelledBy.push(by.kind) });
  void d.submit({ kind: 'remove', holds: true, overtakes: true, run: async () => null });
  expect(await waiting).toEqual({ code: 'action_cancelled', detail: 'Overtaken by remove.' });
  expect(cancelledBy).toEqual(['remove']);
  first.end(null);
});

test('begin is done at once inside submit, even while another command runs; a begin that throws queues nothing', async () => {
  const log: string[] = [];
  const { door: d } = door();
  const running = held('backup', log);
  void d.submit(running.command);
  await tick();
  void d.submit({ kind: 'node_lost', holds: false, begin: () => void log.push('unreachable now') });
  expect(log).toEqual(['backup began', 'unreachable now']);
  expect(() => d.submit({ kind: 'boot', holds: true, begin: () => { throw new Error('plan gone'); }, run: async () => null })).toThrow('plan gone');
  expect(d.holder()?.kind).toBe('backup');
  running.end(null);
});

test('othersSettled waits for the commands it overtook; a run that throws ends as internal_error, logged', async () => {
  const log: string[] = [];
  const errors: string[] = [];
  const { door: d, settled } = door(errors);
  const slow = held('backup', log);
  void d.submit(slow.command);
  await tick();
  const removal = d.submit({
    kind: 'remove', holds: true, overtakes: true,
    run: async (_s, ctx) => {
      await ctx.othersSettled();
      log.push('folder deleted');
      throw new Error('disk gone');
    },
  });
  await tick();
  expect(log).toEqual(['backup began']);
  slow.end(null);
  expect(await removal).toEqual({ code: 'internal_error', detail: 'Error: disk gone' });
  expect(log).toEqual(['backup began', 'backup ended', 'folder deleted']);
  expect(errors).toEqual(['a command on a server failed unexpectedly']);
  await settled();
});

test('othersSettled waits only for what began before it: a removal and a shutdown that overtakes it never wait for each other', async () => {
  // Seen in CI: a server deleted just before the service shut down; both reached othersSettled while the other
  // ran, each waited for the other, and the shutdown never ended.
  const log: string[] = [];
  const { door: d, settled } = door();
  let reached!: () => void;
  const removalWaits = new Promise<void>((r) => (reached = r));
  let goOn!: () => void;
  const gate = new Promise<void>((r) => (goOn = r));
  const removal = d.submit({
    kind: 'remove', holds: true, overtakes: true,
    run: async (_s, ctx) => {
      reached();
      await gate; // still halting the game when the shutdown comes
      await ctx.othersSettled();
      log.push('removal done');
      return null;
    },
  });
  await removalWaits;
  const shutdown = d.submit({
    kind: 'shutdown', holds: true, overtakes: true,
    run: async (_s, ctx) => {
      await ctx.othersSettled();
      log.push('shutdown done');
      return null;
    },
  });
  await tick();
  goOn();
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise((r) => (timer = setTimeout(() => r('stuck'), 2_000)));
  try {
    expect(await Promise.race([Promise.all([removal, shutdown]), stuck])).toEqual([null, null]);
  } finally {
    clearTimeout(timer); // else it holds the test worker open for 2 s after the file ends
  }
  expect(log).toEqual(['removal done', 'shutdown done']); // the shutdown waited for the removal, not the reverse
  await settled();
});

test('a command that releases its hold lets requests in, which then wait behind the rest of it', async () => {
  const log: string[] = [];
  const { door: d } = door();
  let release!: () => void;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  void d.submit({
    kind: 'backup', holds: true,
    run: async (_s, ctx) => {
      release = () => ctx.release();
      await finished;
      log.push('backup ended');
      return null;
    },
  });
  await tick();
  expect(d.holder()?.kind).toBe('backup');
  release(); // the archive is written; the game's start follows
  expect(d.holder()).toBeNull();
  const restore = held('restore', log, { actionId: 'act_4' });
  void d.submit(restore.command);
  expect(d.holder()?.actionId).toBe('act_4');
  await tick();
  expect(log).toEqual([]); // the lock is still the backup's
  finish();
  await tick();
  await tick();
  expect(log).toEqual(['backup ended', 'restore began']);
  restore.end(null);
});
