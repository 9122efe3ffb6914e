'use strict';
/**
 * Child process of the files bench (files.js): the service as `npm start` runs it (startService: HTTP and SFTP on
 * 127.0.0.1), on the DATA_DIR given as argv[2], with SFTP on the port of argv[3], so the parent reads this process's
 * own CPU and memory from /proc/<pid>; argv[4], when given, is JSON of more settings (files-node.js: RUNTIME=docker).
 * Makes one account with a token of every scope the Files API, SSH keys and SFTP need, and sends {type:'listening',
 * port, token}; on {type:'stop'} stops gracefully and exits.
 */
const { dist } = require('./lib');

async function main() {
  const [dir, sftpPort, more] = process.argv.slice(2);
  const config = dist('config').loadConfig({
    DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', SFTP_PORT: sftpPort, RATE_LIMIT_PER_MINUTE: '1000000', GAME_PORT_RANGE: '28940-28949',
    ...(more ? JSON.parse(more) : {}),
  });
  const service = await dist('service').startService(config, dist('log').silentLogger);
  const user = service.store.users.ensure('bench@example.com');
  const { token } = service.store.tokens.create(user.id, { name: 'bench', scopes: ['servers:read', 'servers:write', 'tokens:manage', 'files'] });
  process.on('message', async (m) => {
    if (m && m.type === 'stop') {
      await service.stop();
      process.exit(0);
    }
  });
  // Whether ssh2 runs its ciphers in its own binding (lib/protocol/crypto/build, compiled at its install for the Node
  // that ran the install) or, where that binding does not load in this Node, through node:crypto per packet: SFTP
  // takes about twice as long then (BENCHMARKS.md §13).
  const ssh2Native = require('ssh2/lib/protocol/crypto.js').bindingAvailable;
  process.send({ type: 'listening', port: service.http.address().port, token, ssh2Native });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
