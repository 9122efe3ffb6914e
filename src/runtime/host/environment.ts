/**
 * How a game process is started, stopped, killed, sent a console command and read from. Its files are not here:
 * they are the server's storage's (storage.ts).
 *
 * Modelled on Pterodactyl Wings' `environment.ProcessEnvironment`: one interface with a contract per method, so
 * the supervisor (server-supervisor.ts) never touches child_process and another environment (containers, a remote node)
 * can be dropped in. Unlike Wings, the environment does not own the server state: it reports facts (lines,
 * messages, exit) and the supervisor decides what they mean.
 *
 * The embedded default is local-environment.ts (child processes on this host, each in its own cgroup where the
 * host allows it). docker/docker-environment.ts runs each game as a container on one Docker engine (RUNTIME=docker);
 * what the container world needs beyond the local contract is marked "Extension" below.
 */

/** How a process ended. Exactly one of code/signal is set, as Node reports it. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Set when the environment's own memory limit ended it (the kernel's OOM killer in the server's cgroup). */
  outOfMemory?: true;
}

export type OutputStream = 'stdout' | 'stderr';

/** Where a game listens: host, port, and the transport on it (the software definition's; TCP when absent). */
export interface GameAddress {
  host: string;
  port: number;
  transport?: 'tcp' | 'udp';
}

/** Everything needed to launch one game process. */
export interface LaunchSpec {
  serverId: string;
  /** Rendered command: argv[0] is the executable (no shell is involved, so no quoting issues). */
  argv: string[];
  /** The server's folder as the game sees it (ServerStorage.gameDir): its working directory and HOME. */
  cwd: string;
  /**
   * Extension: where players reach the game (the server's allocated address). A local game binds it itself; a
   * container binds Environment.gameBindHost inside and the engine publishes only this port on this host.
   */
  address: GameAddress;
  /** Open a Node IPC channel (only for Node launchers; messages then arrive through onMessage). */
  ipc: boolean;
  /**
   * The plan's limits: memory in MiB, CPU in percent of one core (100 = one core). How far they are enforced is
   * the environment's business, and its doc says (local-environment.ts: a cgroup, or niceness and the watchdog).
   */
  limits: { memoryMb: number; cpuPercent: number };
}

/** Cumulative CPU time and current memory of a game, as its environment measures it. */
export interface ResourceUsage {
  cpuMs: number;
  rssBytes: number;
}

/** One running (or finished) game process. */
export interface GameProcess {
  readonly pid: number;
  /** The argv as the OS shows it in /proc/<pid>/cmdline (what a later service life verifies before a kill). */
  readonly cmdline: string[];
  /**
   * Resolves once, when the process has exited and what the environment held for it is released (local: every
   * other process of its cgroup killed, the group removed); never rejects.
   */
  readonly exited: Promise<ExitInfo>;
  /** True until the exit has been observed. */
  isAlive(): boolean;
  /**
   * True when the environment itself holds the process and everything it starts to the launch's memory: going
   * over ends it with `outOfMemory` set, and the runtime's RSS watchdog leaves it alone.
   */
  readonly enforcesMemory: boolean;
  /**
   * Writes `text` and a newline to the process's console (stdin). Throws if the process has exited or its stdin
   * is closed; the caller checks the server state first and turns that into `invalid_state`.
   */
  sendCommand(text: string): void;
  /**
   * Graceful stop: writes `stopCommand` to the console, then SIGKILLs the process group if it has not exited
   * after `timeoutMs`. Resolves with the exit once the process is gone (`forced` says whether SIGKILL was needed).
   * Stop on an exited process is a no-op that resolves with the recorded exit.
   */
  stop(stopCommand: string, timeoutMs: number): Promise<ExitInfo & { forced: boolean }>;
  /** SIGKILLs the whole process group now; resolves once it has exited. Kill on an exited process is a no-op. */
  kill(): Promise<ExitInfo>;
  /** Resident set size in bytes from /proc, or null when it cannot be read (exited, not Linux). */
  rssBytes(): number | null;
  /**
   * Each console line as it is printed, without its line break and terminal controls (console-text.ts), so a
   * ready regex sees the text. Listeners added after output are not replayed.
   */
  onLine(fn: (stream: OutputStream, text: string) => void): void;
  /**
   * Each report from the process: its Node IPC messages (local, launched with ipc: true), or the report lines it
   * prints on stdout where no IPC channel crosses (docker/container-process.ts REPORT_PREFIX).
   */
  onMessage(fn: (msg: unknown) => void): void;
  /**
   * Extension: the environment's own measure of the process (a container's from the engine's stats), latest
   * known; null when none came yet or it has exited. Absent: telemetry reads /proc by pid (local).
   */
  usage?(): ResourceUsage | null;
  /**
   * Extension: stops following the process without ending it (a container keeps running when the service
   * shuts down): console, reports and exit are no longer delivered, and `exited` never resolves. Present only
   * where the environment can adopt the process again (Environment.adopt). Absent: shutdown stops the process.
   */
  detach?(): void;
}

/** A process a previous service life recorded (runtime_processes row). */
export interface LeftoverProcess {
  serverId: string;
  pid: number;
  cmdline: string[];
}

export interface Environment {
  /**
   * Service boot, after killLeftover ran for every recorded process and before any spawn: checks what this
   * host can enforce (saying once in the log what it cannot) and removes what else a previous service life left
   * (local: its cgroups, with any process still in one). Never rejects.
   */
  start(): Promise<void>;
  /** Shutdown, after every game has exited: releases what the environment holds on the host. Never rejects. */
  close(): Promise<void>;
  /**
   * A removal, before its files go (the server's files are its storage's, storage.ts): releases what the
   * environment keeps for the server while no process runs (Docker: a container made ahead of its next start, on
   * every node, which holds its volume). Never rejects; a no-op where it keeps nothing (local).
   */
  uninstall(serverId: string): Promise<void>;
  /**
   * Resolves true when nothing listens on the address (its port on its transport, TCP unless `udp`) where this
   * server runs, so its game can bind it.
   */
  isPortFree(address: GameAddress, serverId: string): Promise<boolean>;
  /**
   * Starts the process with the launch's limits applied before it runs game code, and an environment of its
   * own: never the service's variables (tokens, DATA_DIR), only what a game needs and GSH_SERVER_ID. Resolves
   * once the OS has started it (its pid is known); rejects if it could not be started at all (e.g. the
   * executable does not exist, or its limits could not be set). Readiness is not this method's business.
   */
  spawn(spec: LaunchSpec): Promise<GameProcess>;
  /**
   * Extension: starts the process of the server's next spawn ahead, for software whose launcher holds
   * (SoftwareDefinition.launchHold: it loads its code and reads nothing of its folder until told to go), while
   * its files are still being written (a move's last pass, moves.ts). spawn(spec) with an equal spec then only
   * tells it to go; any other spec, uninstall, or close removes it. Never rejects: one not made leaves spawn to
   * start anew. Absent: nothing is started ahead (local).
   */
  prestart?(spec: LaunchSpec): Promise<void>;
  /**
   * Kills a process a previous service life left behind, but only if /proc/<pid>/cmdline still equals the
   * recorded argv and its environment names this server (GSH_SERVER_ID), so a reused pid is never touched.
   * Resolves true if it killed something (after it has gone), false if there was nothing of ours to kill.
   */
  killLeftover(leftover: LeftoverProcess): Promise<boolean>;
  /**
   * Extension: takes over a process a previous service life left still running (a container, which outlives
   * the service), instead of killing it: resolves with it attached (console, reports, exit) when it is this
   * server's and still runs, else null (the caller then runs killLeftover). Called at boot before start(),
   * which then removes whatever of this instance was not adopted. Absent: nothing is ever adopted (local).
   */
  adopt?(leftover: LeftoverProcess): Promise<GameProcess | null>;
  /**
   * Extension: the address a game binds where it is not the address players use (in a container: every
   * interface of its own network namespace). Absent: the game binds its public address (LaunchSpec.address).
   */
  readonly gameBindHost?: string;
  /**
   * Extension: where servers run on other machines (nodes), reports those whose node stopped answering
   * (`reachable` false) or answers again (true). From start() to close(), every check interval; a node still away
   * is reported again at each check, so a server that appeared on it meanwhile is told too. Absent: always reachable.
   */
  onReachability?(fn: (serverIds: string[], reachable: boolean) => void): void;
  /** Extension: false while the server's node does not answer (as of the last check). Absent: always true. */
  reachable?(serverId: string): boolean;
}
