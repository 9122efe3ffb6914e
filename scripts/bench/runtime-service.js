'use strict';
/**
 * Child process of the runtime bench: the service exactly as `npm start` runs it (startService: boot, reconcile
 * loop, sampler, HTTP on 127.0.0.1), on the DATA_DIR given as argv[2], so the parent can read this process's own
 * CPU and memory from /proc/<pid> with the games excluded (they are its children, separate processes).
 * argv[3], when given, is JSON of more environment settings (the streams bench lifts STREAMS_PER_USER).
 * Answers {type:'heap'} with the live heap after a full collection, {type:'streams'} with the open event streams.
 * Sends {type:'listening', port, token}; on {type:'stop'} stops gracefully (every game gets its stop command)
 * and exits.
 */
const { dist } = require('./lib');

async function main() {
  const dir = process.argv[2];
  const config = dist('config').loadConfig({
    DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '1000000', GAME_PORT_RANGE: '27600-27700',
    // One account makes and runs up to 30 bench servers at once: quotas raised as an operator would.
    QUOTA_SERVERS: '1000', QUOTA_RUNNING_SERVERS: '1000', QUOTA_MEMORY_MB: '10000000',
    ...(process.argv[3] ? JSON.parse(process.argv[3]) : {}),
  });
  const service = await dist('service').startService(config, dist('log').silentLogger);
  const user = service.store.users.ensure('bench@example.com');
  const { token } = service.store.tokens.create(user.id, {
    name: 'bench', scopes: ['servers:read', 'servers:write'],
  });
  process.on('message', async (m) => {
    if (m && m.type === 'stop') {
      await service.stop();
      process.exit(0);
    }
    // The live heap after a full collection (when forked with --expose-gc): what the service really holds, as
    // opposed to RSS, which also counts garbage V8 has not collected yet and heap it keeps reserved.
    // The streams bench counts drops here: its clients never read, so they cannot see their connection close.
    if (m && m.type === 'streams') process.send({ type: 'streams', open: service.streams.size() });
    if (m && m.type === 'heap') {
      if (global.gc) global.gc();
      const u = process.memoryUsage();
      process.send({ type: 'heap', heapUsed: u.heapUsed, external: u.external, rss: u.rss });
    }
  });
  process.send({ type: 'listening', port: service.http.address().port, token });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
