import type { ActionType } from './actions-repo';
import type { CrashReason } from './crashes-repo';

/**
 * Told about facts the moment their row is written, for the operator's metrics (src/prometheus.ts). Called after
 * the write, never inside a transaction that could still roll back; an observer must not throw.
 */
export interface StoreObserver {
  /** An action completed (`ActionsRepo.finish` changed its row; a second finish of it is not reported). */
  actionFinished?(type: ActionType, outcome: 'succeeded' | 'failed'): void;
  /** A crash was recorded (`CrashesRepo.record`). */
  crashRecorded?(reason: CrashReason): void;
}
