import type { components } from '../../generated/v1';

/**
 * What the telemetry layer hands to the HTTP layer: the API's own JSON bodies, typed from the spec
 * (openapi/v1.yaml → generated/v1.ts), so the store cannot return a shape the contract does not allow.
 */
type Schemas = components['schemas'];

/**
 * A stored sample. `id` is its SSE event id: the sample's unix second, zero-padded to 10 digits, so ids of one
 * server are unique and sort as text in time order; `after(serverId, id)` resumes right behind it.
 * `at` is stored at whole-second precision (a second sample of a server in the same second replaces the first);
 * CPU to 0.1 %, RAM in KiB (RSS is page-granular, so exact).
 */
export type Sample = Schemas['Sample'];

/** One sampling of one server, before it is stored. */
export type NewSample = Omit<Sample, 'id'>;

export type Stat = Schemas['Stat'];

/** One bucket of `resolution_seconds` starting at `at`; buckets with no samples are left out (a gap). */
export type MetricsPoint = Schemas['MetricsPoint'];

export type MetricsSummary = Schemas['MetricsSummary'];

/**
 * A window: `from` is the start of the first bucket (the window start rounded down to resolution_seconds);
 * `now` is the latest sample if it is fresh (at most 3 sampling intervals old), else null; points oldest
 * first, at most 500.
 */
export type MetricsWindow = Schemas['Metrics'];
