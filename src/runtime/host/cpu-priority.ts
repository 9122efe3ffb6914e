/**
 * CPU share without cgroups, the local environment's fallback where no cgroup can be written (with one, the plan's
 * cpu_percent is the group's CPU quota instead: cgroups.ts). Then the only per-process lever is scheduling
 * priority: the plan's cpu_percent becomes a CFS weight, and the weight the niceness whose CFS weight is closest
 * (local-environment.ts applies it through `nice` before exec, so every thread inherits it).
 *
 * Honest limits: niceness only weighs processes against each other while the CPU is contended; it caps nothing
 * on an idle host, and an unprivileged service can only lower priority, so shares above 1024 behave as 1024.
 */
/** Linux CFS weights for nice 0..19 (kernel/sched/core.c sched_prio_to_weight); cgroup cpu.shares use the same scale. */
const CFS_WEIGHTS = [1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15];

/**
 * A plan's cpu_percent (100 = one core) as a CFS weight (1024 = one core's fair share at nice 0). Plans above one
 * core are capped at 1024, so no game is ever scheduled ahead of the control plane itself.
 */
export function sharesFor(cpuPercent: number): number {
  return Math.min(1024, Math.round((cpuPercent / 100) * 1024));
}

/** The niceness whose CFS weight is closest to `cpuShares` (1024 = a full share = nice 0; we cannot go below 0). */
export function nicenessFor(cpuShares: number): number {
  let best = 0;
  for (let n = 0; n < CFS_WEIGHTS.length; n++) {
    if (Math.abs(CFS_WEIGHTS[n] - cpuShares) < Math.abs(CFS_WEIGHTS[best] - cpuShares)) best = n;
  }
  return best;
}
