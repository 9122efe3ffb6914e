// Scrapes /metrics over HTTP and reads it with an independent parser of the text format (the service writes it
// with prom-client), so a test sees what Prometheus would.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parseText = require('parse-prometheus-text-format') as (text: string) => Family[];

interface Sample {
  value?: string;
  labels?: Record<string, string>;
}

interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

export interface Scrape {
  families: Family[];
  /** The value of the first sample of `name` whose labels include `labels`; 0 if none (a histogram: NAME_count). */
  value(name: string, labels?: Record<string, string>): number;
  has(name: string): boolean;
}

export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  // The parser merges a histogram's labelled series into one unlabelled sample (its flattenMetrics), so histograms
  // are read as the plain series they are on the wire: NAME_bucket, NAME_sum and NAME_count, each with its labels.
  // Read that way, a histogram's series interleave, so one name comes back as several families: merged here.
  const parsed = parseText((await res.text()).replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  const byName = new Map<string, Family>();
  for (const f of parsed) {
    const known = byName.get(f.name);
    if (known) known.metrics.push(...f.metrics);
    else byName.set(f.name, { ...f, metrics: [...f.metrics] });
  }
  const families = [...byName.values()];
  return {
    families,
    has: (name) => families.some((f) => f.name === name),
    value(name, labels = {}) {
      const family = families.find((f) => f.name === name);
      const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
      return sample ? Number(sample.value) : 0;
    },
  };
}
