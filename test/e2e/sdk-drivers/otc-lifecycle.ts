// A client author's program against the SDK openapi-typescript-codegen makes from openapi/v1.yaml: create →
// start → metrics → stop → delete. test/e2e/sdk-generators.test.ts copies it beside the generated client,
// type-checks both under `strict`, compiles and runs it against a listening service (BASE, TOKEN, VERSION).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { ActionsService, ApiError, CatalogService, MetricsService, OpenAPI, PowerActionType, ServerState, ServersService } from './client';
import type { Action, Metrics, Server } from './client';

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
  OpenAPI.BASE = process.env.BASE ?? '';
  OpenAPI.TOKEN = process.env.TOKEN;
  const steps: string[] = [];
  const plan = (await CatalogService.listPlans()).data[0].id;
  const version = process.env.VERSION ?? (await CatalogService.listVersions()).data[0].id;
  const created: Server = await ServersService.createServer({ name: 'SDK lifecycle', plan, version }, 'sdk-otc-1');
  steps.push(`created ${created.state}`);
  const state = (s: ServerState) => async () => ((await ServersService.getServer(created.id)).state === s ? s : undefined);
  await until('stopped after install', state(ServerState.STOPPED));
  const start: Action = await ActionsService.createServerAction(created.id, { type: PowerActionType.START }, 'sdk-otc-start');
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state(ServerState.RUNNING)));
  const metrics: Metrics = await until('a sample', async () => {
    const m = await MetricsService.getServerMetrics(created.id, '5m');
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = await ActionsService.createServerAction(created.id, { type: PowerActionType.STOP });
  const done = await until('the stop to end', async () => {
    const a = await ActionsService.getServerAction(created.id, stop.id);
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state(ServerState.STOPPED)));
  const deleting = await ServersService.deleteServer(created.id);
  steps.push(`delete ${deleting.state}`);
  const gone = await until('404', async () => {
    try {
      await ServersService.getServer(created.id);
      return undefined;
    } catch (err) {
      return err instanceof ApiError ? err.status : undefined;
    }
  });
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
