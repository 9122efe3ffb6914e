// A client author's program against the SDK swagger-typescript-api makes from openapi/v1.yaml: create → start →
// metrics → stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client, type-checks both
// under `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { Api, PowerActionType, ServerState, type HttpResponse, type Problem } from './client/api';

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
  // Its security worker adds the token to every operation the spec marks secured.
  const api = new Api<string>({ baseUrl: process.env.BASE, securityWorker: (token) => (token ? { headers: { Authorization: `Bearer ${token}` } } : {}) });
  api.setSecurityData(process.env.TOKEN ?? null);
  const steps: string[] = [];
  const plan = (await api.v1.listPlans()).data.data[0].id;
  const version = process.env.VERSION ?? (await api.v1.listVersions()).data.data[0].id;
  const { data: created } = await api.v1.createServer({ name: 'SDK lifecycle', plan, version }, { headers: { 'Idempotency-Key': 'sdk-sta-1' } });
  steps.push(`created ${created.state}`);
  const state = (s: ServerState) => async () => ((await api.v1.getServer(created.id)).data.state === s ? s : undefined);
  await until('stopped after install', state(ServerState.Stopped));
  const { data: start } = await api.v1.createServerAction(created.id, { type: PowerActionType.Start });
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state(ServerState.Running)));
  const metrics = await until('a sample', async () => {
    const { data: m } = await api.v1.getServerMetrics(created.id, { range: '5m' });
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const { data: stop } = await api.v1.createServerAction(created.id, { type: PowerActionType.Stop });
  const done = await until('the stop to end', async () => {
    const { data: a } = await api.v1.getServerAction(created.id, stop.id);
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state(ServerState.Stopped)));
  const { data: deleting } = await api.v1.deleteServer(created.id);
  steps.push(`delete ${deleting.state}`);
  // It throws the response of an error status, its `error` the Problem.
  const gone = await until('404', () => api.v1.getServer(created.id).then(() => undefined, (err: HttpResponse<unknown, Problem>) => err.status));
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
