// A client author's program against the SDK orval makes from openapi/v1.yaml (its fetch client, calling the
// project's own fetch function: sdk-drivers/orval-fetch.ts, `./client/fetcher` here): create → start → metrics →
// stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client, type-checks both under
// `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { ServerState, createServer, createServerAction, deleteServer, getServer, getServerAction, getServerMetrics, listPlans, listVersions } from './client/api';
import { configure } from './client/fetcher';

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Each function answers `{ data, status }` for every documented status; the one a program goes on with. */
function ok<R extends { status: number; data: unknown }, S extends R['status']>(res: R, status: S): Extract<R, { status: S }>['data'] {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.data)}`);
  return res.data;
}

async function main(): Promise<void> {
  configure(process.env.BASE ?? '', process.env.TOKEN ?? '');
  const steps: string[] = [];
  const plan = ok(await listPlans(), 200).data[0].id;
  const version = process.env.VERSION ?? ok(await listVersions(), 200).data[0].id;
  const created = ok(await createServer({ name: 'SDK lifecycle', plan, version }, { headers: { 'Idempotency-Key': 'sdk-orval-1' } }), 201);
  steps.push(`created ${created.state}`);
  const state = (s: ServerState) => async () => (ok(await getServer(created.id), 200).state === s ? s : undefined);
  await until('stopped after install', state(ServerState.stopped));
  const start = ok(await createServerAction(created.id, { type: 'start' }), 202);
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state(ServerState.running)));
  const metrics = await until('a sample', async () => {
    const m = ok(await getServerMetrics(created.id, { range: '5m' }), 200);
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = ok(await createServerAction(created.id, { type: 'stop' }), 202);
  const done = await until('the stop to end', async () => {
    const a = ok(await getServerAction(created.id, stop.id), 200);
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state(ServerState.stopped)));
  const deleting = ok(await deleteServer(created.id), 202);
  steps.push(`delete ${deleting.state}`);
  const gone = await until('404', async () => {
    const res = await getServer(created.id);
    return res.status === 200 ? undefined : res.status;
  });
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
