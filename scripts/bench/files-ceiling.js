'use strict';
/**
 * Child process of the files bench (files.js): the ceiling of an HTTP transfer in Node.js on this machine, beside the
 * service in the same run. A minimal node:http server with nothing of ours: `PUT /<name>` pipes the request body
 * into a file of the folder argv[2], `GET /<name>` pipes that file into the answer (with its Content-Length).
 * argv[3] is the streams' buffer size in bytes (`highWaterMark` of the file streams and of the server's sockets),
 * `default` for Node's own defaults. Sends {type:'listening', port}; on {type:'stop'} closes and exits.
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');

const [dir, buffer] = process.argv.slice(2);
const hwm = buffer === 'default' ? {} : { highWaterMark: Number(buffer) };

const server = http.createServer({ requestTimeout: 0, ...hwm }, (req, res) => {
  const file = path.join(dir, path.basename(req.url));
  if (req.method === 'PUT') {
    pipeline(req, fs.createWriteStream(file, hwm)).then(
      () => res.writeHead(201).end(),
      () => res.writeHead(500).end(),
    );
    return;
  }
  fs.stat(file, (err, st) => {
    if (err) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(st.size) });
    pipeline(fs.createReadStream(file, hwm), res).catch(() => res.destroy());
  });
});

server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('message', (m) => {
  if (m && m.type === 'stop') server.close(() => process.exit(0));
});
