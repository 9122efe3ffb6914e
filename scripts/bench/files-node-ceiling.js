'use strict';
/**
 * Child process of the files-node bench (files-node.js): the ceiling of a Node.js HTTP relay between a client and
 * the engine's archive endpoints (Docker Engine API "Extract an archive of files or folders to a directory in a
 * container", "Get an archive of a filesystem resource in a container"), beside the service in the same run.
 * Nothing of ours: node:http to the engine's unix socket and tar-stream.
 * - `PUT /<name>`: the request body streamed as a one-entry tar (its size from Content-Length) into
 *   `PUT /containers/{id}/archive?path=<dir>`; 201 when the engine answers 200.
 * - `GET /<name>`: `GET /containers/{id}/archive?path=<dir>/<name>`, the first entry's bytes streamed out of the tar
 *   into the answer, with its size as Content-Length.
 * The tar goes to the engine chunked, as the bare copy's does (engine.ts upload); with a Content-Length instead it
 * was no faster (698 against 735 ms up, 5 rounds alternated).
 * argv: the engine's socket path, the scratch container's id, the folder in it, and the streams' buffer size in bytes
 * (`highWaterMark` of the server's and the engine connection's sockets) or `default` for Node's own.
 * Sends {type:'listening', port}; on {type:'stop'} closes and exits.
 */
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const tar = require('tar-stream');

const [socketPath, container, dir, buffer] = process.argv.slice(2);
const hwm = buffer === 'default' ? {} : { highWaterMark: Number(buffer) };
const archive = (p) => `/containers/${container}/archive?path=${encodeURIComponent(p)}`;

/** One request to the engine; resolves with its answer. */
function engine(method, url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path: url, ...hwm, headers: body ? { 'Content-Type': 'application/x-tar' } : {} }, resolve);
    req.on('error', reject);
    if (!body) return void req.end();
    body.on('error', (err) => req.destroy(err));
    body.pipe(req);
  });
}

async function put(req, res, name) {
  const pack = tar.pack();
  const size = Number(req.headers['content-length']);
  const entry = pack.entry({ name, size, mode: 0o644, uid: 1000, gid: 1000 }, (err) => (err ? pack.destroy(err) : pack.finalize()));
  req.pipe(entry);
  const answer = await engine('PUT', archive(dir), pack);
  answer.resume();
  await new Promise((resolve) => answer.on('end', resolve));
  res.writeHead(answer.statusCode === 200 ? 201 : 502).end();
}

async function get(res, name) {
  const answer = await engine('GET', archive(path.posix.join(dir, name)));
  if (answer.statusCode !== 200) {
    answer.resume();
    return void res.writeHead(answer.statusCode === 404 ? 404 : 502).end();
  }
  const extract = tar.extract();
  let first = true;
  extract.on('entry', (header, stream, next) => {
    if (!first) {
      stream.on('end', next);
      return void stream.resume();
    }
    first = false;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(header.size) });
    stream.pipe(res);
    stream.on('end', next);
  });
  await pipeline(answer, extract);
  if (first) res.writeHead(404).end();
}

const server = http.createServer({ requestTimeout: 0, ...hwm }, (req, res) => {
  const name = path.basename(req.url);
  (req.method === 'PUT' ? put(req, res, name) : get(res, name)).catch((err) => {
    console.error(`  relay ${req.method} ${name}: ${err.message}`);
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  });
});

server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('message', (m) => {
  if (m && m.type === 'stop') server.close(() => process.exit(0));
});
