import { messageOf } from './errors';
import { loadConfig, ConfigError } from './config';
import { createLogger } from './log';
import type { AddressInfo } from 'node:net';
import { startService } from './service';
import { startupBlock } from './first-run';

/** `npm start`: read the configuration, start the service, stop it cleanly on SIGTERM or SIGINT. */
async function main() {
  const log = createLogger();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gsh: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config, log);
  // To stderr: stdout carries only the JSON log lines, for machines; a terminal shows both.
  process.stderr.write(
    startupBlock({
      config,
      address: service.http.address() as AddressInfo,
      metricsAddress: (service.metricsHttp?.address() ?? undefined) as AddressInfo | undefined,
      dashboardUsers: service.store.users.countWithPassword(),
      node: process.version,
    }),
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          log.error('shutdown failed', { error: String(err) });
          process.exit(1);
        },
      );
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`gsh: failed to start: ${messageOf(err)}\n`);
  process.exit(1);
});
