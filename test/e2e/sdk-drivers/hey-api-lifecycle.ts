// A client author's program against the SDK @hey-api/openapi-ts makes from openapi/v1.yaml: create → start →
// metrics → stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client, type-checks both
// under `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { client } from './client/client.gen';
import { createServer, createServerAction, deleteServer, getServer, getServerAction, getServerMetrics, listPlans, listVersions, type ServerState } from './client';

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
  // `auth` answers the spec's bearer scheme; `throwOnError` per call gives `data` without `undefined`.
  client.setConfig({ baseUrl: process.env.BASE, auth: process.env.TOKEN });
  const steps: string[] = [];
  const plan = (await listPlans({ throwOnError: true })).data.data[0].id;
  const version = process.env.VERSION ?? (await listVersions({ throwOnError: true })).data.data[0].id;
  const { data: created } = await createServer({ body: { name: 'SDK lifecycle', plan, version }, headers: { 'Idempotency-Key': 'sdk-hey-api-1' }, throwOnError: true });
  steps.push(`created ${created.state}`);
  const path = { server_id: created.id };
  const state = (s: ServerState) => async () => ((await getServer({ path, throwOnError: true })).data.state === s ? s : undefined);
  await until('stopped after install', state('stopped'));
  const { data: start } = await createServerAction({ path, body: { type: 'start' }, throwOnError: true });
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state('running')));
  const metrics = await until('a sample', async () => {
    const { data: m } = await getServerMetrics({ path, query: { range: '5m' }, throwOnError: true });
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const { data: stop } = await createServerAction({ path, body: { type: 'stop' }, throwOnError: true });
  const done = await until('the stop to end', async () => {
    const { data: a } = await getServerAction({ path: { ...path, action_id: stop.id }, throwOnError: true });
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state('stopped')));
  const { data: deleting } = await deleteServer({ path, throwOnError: true });
  steps.push(`delete ${deleting.state}`);
  // Without throwOnError, an error status answers `{ error, response }`.
  const gone = await until('404', async () => {
    const { error, response } = await getServer({ path });
    return error ? response.status : undefined;
  });
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : JSON.stringify(err)}\n`);
  process.exit(1);
});
