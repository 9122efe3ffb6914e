// When V8 starts a full (incremental) marking while bytes stream through the service: a file transfer (API or SFTP)
// or a move between nodes (BENCHMARKS.md §13, §15). With V8's default, a heap above its activation threshold (8 MB;
// the service's is ≈30 MB, a bare relay's ≈7 MB) starts marking whenever its old generation's headroom is below the
// young generation's capacity, and a transfer's stream of socket buffers kept that true: ≈100 mark-compacts for six
// 200 MB transfers, about half the service's CPU while files moved (a bare relay: 3). Started once half the headroom
// is used, marking still runs in steps and the same transfers need ≈16 and half the CPU. It holds only while
// something streams (V8 reads the flag at each allocation-limit check): the API's calls and an idle service keep
// V8's default, as §11 measures them. V8's flags are the process's, so this count is too: the one piece of module
// state, by necessity.
import v8 from 'node:v8';

let streaming = 0;

/** A stream begins: the tuned setting holds until every stream begun has ended. Returns its end, which counts once. */
export function whileStreaming(): () => void {
  if (streaming++ === 0) v8.setFlagsFromString('--incremental-marking-soft-trigger=50');
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    if (--streaming === 0) v8.setFlagsFromString('--incremental-marking-soft-trigger=0');
  };
}

/** Streams under way (for tests). */
export const streamsUnderWay = (): number => streaming;
