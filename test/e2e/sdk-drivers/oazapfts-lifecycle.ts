// A client author's program against the SDK oazapfts makes from openapi/v1.yaml (its functions answer every
// documented status; `ok` from its runtime gives the success's data or throws an HttpError): create → start →
// metrics → stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client, type-checks both
// under `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { HttpError, ok } from '@oazapfts/runtime';
import { createServer, createServerAction, defaults, deleteServer, getServer, getServerAction, getServerMetrics, listPlans, listVersions, type ServerState } from './client/api';

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
  defaults.baseUrl = process.env.BASE ?? '';
  defaults.headers = { Authorization: `Bearer ${process.env.TOKEN}` };
  const steps: string[] = [];
  const plan = (await ok(listPlans())).data[0].id;
  const version = process.env.VERSION ?? (await ok(listVersions())).data[0].id;
  const created = await ok(createServer({ name: 'SDK lifecycle', plan, version }, { idempotencyKey: 'sdk-oazapfts-1' }));
  steps.push(`created ${created.state}`);
  const state = (s: ServerState) => async () => ((await ok(getServer(created.id))).state === s ? s : undefined);
  await until('stopped after install', state('stopped'));
  const start = await ok(createServerAction(created.id, { type: 'start' }));
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state('running')));
  const metrics = await until('a sample', async () => {
    const m = await ok(getServerMetrics(created.id, { range: '5m' }));
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = await ok(createServerAction(created.id, { type: 'stop' }));
  const done = await until('the stop to end', async () => {
    const a = await ok(getServerAction(created.id, stop.id));
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state('stopped')));
  const deleting = await ok(deleteServer(created.id));
  steps.push(`delete ${deleting.state}`);
  const gone = await until('404', () => ok(getServer(created.id)).then(() => undefined, (err: unknown) => (err instanceof HttpError ? err.status : undefined)));
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
