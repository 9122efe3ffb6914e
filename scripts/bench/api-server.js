'use strict';
/**
 * Child process of the API bench: one HTTP server on 127.0.0.1 on a free port, driven by the parent over IPC.
 *
 *   node api-server.js full   the whole service as `npm start` builds it (dist/src/service.js startService) on a
 *                             temp DATA_DIR, rate limit raised to 1,000,000/min, with a user and a real token,
 *                             logging nothing
 *   node api-server.js full-log  the same with the production logger (a JSON access-log line per request, stdout)
 *   node api-server.js bare   a bare express app; the parent sends it {type:'responses', responses} (method, path,
 *                             Idempotency-Key, status, headers and body captured once from the full stack) and it
 *                             answers each request, once its body is read, with exactly those bytes
 *
 * Messages to the parent: {type:'listening', port, token?}, {type:'profiled', file}. From the parent:
 * {type:'stop'} (graceful close, then exit 0); {type:'profile-start'} and {type:'profile-stop', file}, which run
 * V8's sampling CPU profiler (the one behind `node --cpu-prof`) through node:inspector for exactly the load
 * window, so start-up work (spec parsing, Ajv compilation) does not blur the per-request picture.
 */
const fs = require('node:fs');
const inspector = require('node:inspector');
const { dist, tempDir } = require('./lib');

async function full(withLog) {
  const { loadConfig } = dist('config');
  const { startService } = dist('service');
  const { silentLogger, createLogger } = dist('log');
  const dir = tempDir('api');
  const config = loadConfig({
    DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '1000000', GAME_PORT_RANGE: '27700-27799',
    // One account makes all 25 bench servers, past the default servers and memory quotas: raised as an operator would.
    QUOTA_SERVERS: '1000', QUOTA_RUNNING_SERVERS: '1000', QUOTA_MEMORY_MB: '10000000',
  });
  const service = await startService(config, withLog ? createLogger() : silentLogger);
  const user = service.store.users.ensure('bench@example.com');
  const { token } = service.store.tokens.create(user.id, {
    name: 'bench', scopes: ['servers:read', 'servers:write', 'tokens:manage'],
  });
  return {
    port: service.http.address().port,
    token,
    async stop() {
      await service.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function bare() {
  const express = require('express');
  const { responses } = await new Promise((resolve) => process.once('message', resolve));
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag'); // the captured headers already carry the full stack's ETag, if any
  // One route per captured method and path, so express still routes; the handler reads the request's body, then
  // writes the captured bytes (two captures of one route differ by their Idempotency-Key).
  const routes = new Map();
  for (const r of responses) {
    const key = `${r.method} ${r.path}`;
    if (!routes.has(key)) {
      routes.set(key, new Map());
      app[r.method.toLowerCase()](r.path, (req, res) => {
        const answer = routes.get(key).get(req.headers['idempotency-key'] ?? '');
        req.resume();
        req.on('end', () => {
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        });
      });
    }
    routes.get(key).set(r.key, { status: r.status, headers: r.headers, body: Buffer.from(r.body, 'base64') });
  }
  const http = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  return {
    port: http.address().port,
    stop: () => new Promise((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    }),
  };
}

async function main() {
  const mode = process.argv[2];
  const server = mode === 'full' || mode === 'full-log' ? await full(mode === 'full-log') : mode === 'bare' ? await bare() : null;
  if (!server) throw new Error('usage: api-server.js full|full-log|bare');
  const session = new inspector.Session();
  const post = (method, params) => new Promise((resolve, reject) =>
    session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  process.on('message', async (m) => {
    if (m && m.type === 'stop') {
      await server.stop();
      process.exit(0);
    } else if (m && m.type === 'profile-start') {
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 250 }); // µs
      await post('Profiler.start');
      process.send({ type: 'profiling' });
    } else if (m && m.type === 'profile-stop') {
      const { profile } = await post('Profiler.stop');
      session.disconnect();
      fs.writeFileSync(m.file, JSON.stringify(profile));
      process.send({ type: 'profiled', file: m.file });
    }
  });
  process.send({ type: 'listening', port: server.port, token: server.token });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
