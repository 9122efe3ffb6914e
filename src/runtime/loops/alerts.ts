// Alert rules' evaluation (openapi/v1.yaml createServerAlertRule; docs/architecture.md "Alerts"): metric rules from
// the telemetry samples as they are stored (no polling of its own), crash rules resolved by the first sample of the
// server running again. Crash rules trigger in the crash's own transaction (AlertsRepo.crashed).
import type { Plan } from '../../catalog/plans';
import type { Logger } from '../../log';
import type { AlertMetric, AlertRule, AlertsRepo } from '../../store/alerts-repo';
import type { ServersRepo } from '../../store/servers-repo';

/** What the evaluator reads of a telemetry sample (src/telemetry/types.ts Sample). */
export interface AlertSample {
  server_id: string;
  /** RFC 3339, the sampler's clock. */
  at: string;
  tps: number | null;
  cpu_percent: number;
  ram_bytes: number;
  players_online: number;
}

/** The sample's value of a metric; ram_percent is of the plan's memory. null when the sample has none (tps). */
export function metricValue(metric: AlertMetric, sample: AlertSample, planMemoryMb: number): number | null {
  switch (metric) {
    case 'tps':
      return sample.tps;
    case 'cpu_percent':
      return sample.cpu_percent;
    case 'players_online':
      return sample.players_online;
    case 'ram_percent':
      return planMemoryMb > 0 ? Math.round((sample.ram_bytes / (planMemoryMb * 1024 * 1024)) * 1000) / 10 : null;
  }
}

export interface AlertsDeps {
  /** Every stored sample as it is stored (the sampler's subscribe); returns the unsubscribe. */
  subscribe(listener: (sample: AlertSample) => void): () => void;
  repo: Pick<AlertsRepo, 'ofServer' | 'transition'>;
  servers: Pick<ServersRepo, 'find'>;
  plans: readonly Plan[];
  log: Logger;
}

/**
 * A metric rule triggers once its condition has held on every sample for `duration_seconds`, and resolves once it
 * has failed on every sample for as long (time hysteresis: at most one change per duration, however the metric
 * hovers around the threshold). How long a condition has held lives in memory: after a service restart it is
 * counted again, which can only delay a change, never invent one. A sample without the metric (no TPS reported
 * yet) counts for neither side.
 */
export function createAlerts(deps: AlertsDeps) {
  /** Per rule: since when (ms) the samples have disagreed with its state, if they do. */
  const leaning = new Map<string, number>();
  let unsubscribe: (() => void) | null = null;

  function evaluate(rule: AlertRule, sample: AlertSample, at: number, memoryMb: () => number): void {
    if (rule.kind === 'crash') {
      if (rule.state === 'firing') deps.repo.transition(rule.id, 'ok', null); // a sample: it runs again
      return;
    }
    const { metric, threshold } = rule;
    // Migration 022's CHECK: a metric rule has its metric and threshold (alerts-repo.ts).
    if (metric === undefined || threshold === undefined) throw new Error(`alert rule ${rule.id} has no metric or threshold`);
    const value = metricValue(metric, sample, metric === 'ram_percent' ? memoryMb() : 0);
    if (value === null) {
      leaning.delete(rule.id);
      return;
    }
    const holds = rule.comparison === 'below' ? value < threshold : value > threshold;
    if (holds === (rule.state === 'firing')) {
      leaning.delete(rule.id);
      return;
    }
    const since = leaning.get(rule.id) ?? at;
    leaning.set(rule.id, since);
    if (at - since < rule.duration_seconds * 1000) return;
    leaning.delete(rule.id);
    deps.repo.transition(rule.id, holds ? 'firing' : 'ok', value);
  }

  function onSample(sample: AlertSample): void {
    try {
      const rules = deps.repo.ofServer(sample.server_id);
      if (rules.length === 0) return;
      const at = Date.parse(sample.at);
      let memory: number | undefined;
      const memoryMb = () => (memory ??= deps.plans.find((p) => p.id === deps.servers.find(sample.server_id)?.plan)?.memory_mb ?? 0);
      for (const rule of rules) evaluate(rule, sample, at, memoryMb);
    } catch (err) {
      deps.log.error('evaluating alert rules failed; tried again at the next sample', { server_id: sample.server_id, error: String(err) });
    }
  }

  return {
    start(): void {
      unsubscribe ??= deps.subscribe(onSample);
    },
    stop(): void {
      unsubscribe?.();
      unsubscribe = null;
      leaning.clear();
    },
  };
}

export type Alerts = ReturnType<typeof createAlerts>;
