/**
 * What the telemetry layer hands to the HTTP layer. Names are snake_case because these objects are the API's
 * JSON bodies as they are (openapi/v1.yaml); nothing maps them again.
 */

/** One sampling of one server, before it is stored. */
export interface NewSample {
  server_id: string;
  /** RFC 3339 UTC. Stored at whole-second precision: a second sample of the same server in the same second replaces the first. */
  at: string;
  /** Ticks per second as the game reports it; null when the game does not report it (yet). */
  tps: number | null;
  /** CPU of the game's process tree over the last interval; 100 = one core fully busy. Stored to 0.1. */
  cpu_percent: number;
  /** Resident memory of the process tree, bytes. Stored in KiB (RSS is page-granular, so exact). */
  ram_bytes: number;
  players_online: number;
  players_max: number;
}

/**
 * A stored sample. `id` is its SSE event id: the sample's unix second, zero-padded to 10 digits, so ids of one
 * server are unique and sort as text in time order; `after(serverId, id)` resumes right behind it.
 */
export interface Sample extends NewSample {
  id: string;
}

export interface Stat {
  min: number;
  avg: number;
  max: number;
}

/** One bucket of `resolution_seconds` starting at `at`; buckets with no samples are left out (a gap). */
export interface MetricsPoint {
  at: string;
  samples: number;
  /** null when no sample in the bucket had a tps. */
  tps: Stat | null;
  cpu_percent: Stat;
  ram_bytes: Stat;
  players_online: Stat;
}

export interface MetricsSummary {
  sample_count: number;
  tps_avg: number | null;
  tps_min: number | null;
  cpu_percent_avg: number | null;
  cpu_percent_max: number | null;
  ram_bytes_avg: number | null;
  ram_bytes_max: number | null;
  players_online_peak: number | null;
}

export interface MetricsWindow {
  server_id: string;
  range: string;
  /** Start of the first bucket (the window start rounded down to resolution_seconds). */
  from: string;
  to: string;
  resolution_seconds: number;
  /** The latest sample if it is fresh (at most 3 sampling intervals old), else null: a stopped server has no "now". */
  now: Sample | null;
  summary: MetricsSummary;
  /** Oldest first, at most 500. */
  points: MetricsPoint[];
}
