// The runtime's public surface, for main.ts and the HTTP layer: everything else in src/runtime is internal.
export { createRuntime, runtimeConfigDefaults } from './runtime';
export type { Runtime, RuntimeDeps } from './runtime';
export type { Failure, LiveServer, Plan, RuntimeConfig, RuntimeLog, StateChange } from './types';
export type { Action, ActionStatus, ActionType, Crash } from './runtime-store';
export { createLocalEnvironment } from './local-environment';
export type { Environment, GameProcess } from './environment';
export { loadSoftwareCatalog } from './software-catalog';
export type { CatalogVersion, SoftwareCatalog } from './software-catalog';
export { serverStates, transitions, canTransition } from './states';
export type { ServerState, Transition, TransitionEvent } from './states';
export type { ConsoleLine } from './console-buffer';
export type { PlayersInfo } from './probes';
