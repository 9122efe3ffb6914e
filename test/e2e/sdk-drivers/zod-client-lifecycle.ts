// A client author's program against the client openapi-zod-client makes from openapi/v1.yaml (Zodios, which checks
// every answer against the zod schemas it was made with): create → start → metrics → stop → delete.
// test/e2e/sdk-generators.test.ts copies it beside the generated client, type-checks both under `strict`, compiles
// and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { isAxiosError } from 'axios';
import { createApiClient } from './client/api';

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  const api = createApiClient(process.env.BASE ?? '', { axiosConfig: { headers: { Authorization: `Bearer ${process.env.TOKEN}` } } });
  const steps: string[] = [];
  const plan = (await api.listPlans()).data[0].id;
  const version = process.env.VERSION ?? (await api.listVersions()).data[0].id;
  const created = await api.createServer({ name: 'SDK lifecycle', plan, version }, { headers: { 'Idempotency-Key': 'sdk-zod-1' } });
  steps.push(`created ${created.state}`);
  const params = { server_id: created.id };
  const state = (s: string) => async () => ((await api.getServer({ params })).state === s ? s : undefined);
  await until('stopped after install', state('stopped'));
  const start = await api.createServerAction({ type: 'start' }, { params });
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state('running')));
  const metrics = await until('a sample', async () => {
    const m = await api.getServerMetrics({ params, queries: { range: '5m' } });
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = await api.createServerAction({ type: 'stop' }, { params });
  const done = await until('the stop to end', async () => {
    const a = await api.getServerAction({ params: { ...params, action_id: stop.id } });
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state('stopped')));
  const deleting = await api.deleteServer(undefined, { params });
  steps.push(`delete ${deleting.state}`);
  // Zodios rejects with axios's error, which holds the response.
  const gone = await until('404', () => api.getServer({ params }).then(() => undefined, (err: unknown) => (isAxiosError(err) ? err.response?.status : undefined)));
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
