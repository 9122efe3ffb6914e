// A client author's program on the types openapi-typescript makes from openapi/v1.yaml, with openapi-fetch (the
// same project's fetch client, typed by those `paths`): create → start → metrics → stop → delete.
// test/e2e/sdk-generators.test.ts copies it beside the generated types, type-checks both under `strict`, compiles and
// runs it against a listening service (BASE, TOKEN, VERSION). Not in tsconfig.test.json: `./client` exists only there.
import createClient from 'openapi-fetch';
import type { components, paths } from './client/v1';

type Server = components['schemas']['Server'];

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** openapi-fetch answers `{ data }` or `{ error }` (the Problem); a program that cannot go on throws. */
function must<T>(what: string, res: { data?: T; error?: unknown; response: Response }): T {
  if (res.data === undefined) throw new Error(`${what}: ${res.response.status} ${JSON.stringify(res.error)}`);
  return res.data;
}

async function main(): Promise<void> {
  const api = createClient<paths>({ baseUrl: process.env.BASE, headers: { Authorization: `Bearer ${process.env.TOKEN}` } });
  const steps: string[] = [];
  const plan = must('plans', await api.GET('/v1/plans')).data[0].id;
  const version = process.env.VERSION ?? must('versions', await api.GET('/v1/versions')).data[0].id;
  const created = must('create', await api.POST('/v1/servers', {
    body: { name: 'SDK lifecycle', plan, version },
    params: { header: { 'Idempotency-Key': 'sdk-openapi-fetch-1' } },
  }));
  steps.push(`created ${created.state}`);
  const server = { params: { path: { server_id: created.id } } };
  const state = (s: Server['state']) => async () => (must('get', await api.GET('/v1/servers/{server_id}', server)).state === s ? s : undefined);
  await until('stopped after install', state('stopped'));
  const start = must('start', await api.POST('/v1/servers/{server_id}/actions', { ...server, body: { type: 'start' } }));
  steps.push(`start ${start.status}`);
  steps.push(await until('running', state('running')));
  const metrics = await until('a sample', async () => {
    const m = must('metrics', await api.GET('/v1/servers/{server_id}/metrics', { params: { path: { server_id: created.id }, query: { range: '5m' } } }));
    return m.now !== null ? m : undefined;
  });
  steps.push(`metrics server_id=${metrics.server_id === created.id} ram_bytes>0=${(metrics.now?.ram_bytes ?? 0) > 0} points=${Array.isArray(metrics.points)}`);
  const stop = must('stop', await api.POST('/v1/servers/{server_id}/actions', { ...server, body: { type: 'stop' } }));
  const done = await until('the stop to end', async () => {
    const a = must('action', await api.GET('/v1/servers/{server_id}/actions/{action_id}', { params: { path: { server_id: created.id, action_id: stop.id } } }));
    return a.status === 'succeeded' || a.status === 'failed' ? a : undefined;
  });
  steps.push(`stop ${done.status}`);
  steps.push(await until('stopped', state('stopped')));
  const deleting = must('delete', await api.DELETE('/v1/servers/{server_id}', server));
  steps.push(`delete ${deleting.state}`);
  const gone = await until('404', async () => {
    const { response } = await api.GET('/v1/servers/{server_id}', server);
    return response.status === 404 ? 404 : undefined;
  });
  steps.push(`then ${gone}`);
  process.stdout.write(JSON.stringify(steps));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
