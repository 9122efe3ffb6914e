// A client author's program against the SDK kubb makes from openapi/v1.yaml (its ts and fetch client plugins):
// create → start → metrics → stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client,
// type-checks both under `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { fetch, type Client, type RequestConfig } from './client/gen/.kubb/fetch';
import { createServer, createServerAction, deleteServer, getServer, getServerAction, getServerMetrics, listPlans, listVersions, serverStateEnum, type ServerState } from './client/gen';

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/** kubb's fetch client returns the body whatever the status; this one (its `client` option) throws on an error. */
const client: Client = async <TData, TError, TVariables>(config: RequestConfig<TVariables>) => {
  const res = await fetch<TData, TError, TVariables>(config);
  if (res.status >= 400) throw new HttpError(res.status);
  return res;
};

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
  // Its fetch client sends a body without a Content-Type, which the service answers 415: the type goes in here.
  fetch.setConfig({ baseURL: process.env.BASE, headers: { Authorization: `Bearer ${process.env.TOKEN}`, 'Content-Type': 'application/json' } });
  const steps: string[] = [];
  const plan = (await listPlans({ client })).data[0].id;
  const version = process.env.VERSION ?? (await listVersions({ client })).data[0].id;
  const created = await createServer({ name: 'SDK lifecycle', plan, version }, { 'Idempotency-Key': 'sdk-kubb-1' }, { client });
  steps.push(`created ${created.state}`);
  const state = (s: ServerState) => async () => ((await getServer(created.id, { client })).state === s ? s : undefined);
  await until('stopped after install', state(serverStateEnum.stopped));
  const start = await createServerAction(created.id, { type: 'start' }, undefined, { client });
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state(serverStateEnum.running)));
  const metrics = await until('a sample', async () => {
    const m = await getServerMetrics(created.id, { range: '5m' }, { client });
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = await createServerAction(created.id, { type: 'stop' }, undefined, { client });
  const done = await until('the stop to end', async () => {
    const a = await getServerAction(created.id, stop.id, { client });
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state(serverStateEnum.stopped)));
  const deleting = await deleteServer(created.id, undefined, { client });
  steps.push(`delete ${deleting.state}`);
  const gone = await until('404', () => getServer(created.id, { client }).then(() => undefined, (err: unknown) => (err instanceof HttpError ? err.status : undefined)));
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
