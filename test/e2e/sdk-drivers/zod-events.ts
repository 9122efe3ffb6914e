// A client author's program against the client openapi-zod-client makes: it reads one page of `listEvents`, which
// the client checks against the zod schemas it was made with (Zodios validates every answer). It prints the event
// types it parsed, or what the client refused. test/e2e/sdk-generators.test.ts copies it beside each client it
// makes, type-checks both under `strict`, compiles and runs it against a listening service (BASE, TOKEN).
// Not in tsconfig.test.json: `./client` exists only in that test's folder.
import { createApiClient } from './client/api';

async function main(): Promise<void> {
  const client = createApiClient(process.env.BASE ?? '', { axiosConfig: { headers: { Authorization: `Bearer ${process.env.TOKEN ?? ''}` } } });
  try {
    const page = await client.listEvents({ queries: { limit: 100, order: 'asc' } });
    process.stdout.write(JSON.stringify({ parsed: page.data.map((e) => e.type) }));
  } catch (err) {
    process.stdout.write(JSON.stringify({ refused: err instanceof Error ? err.message.slice(0, 300) : String(err) }));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
