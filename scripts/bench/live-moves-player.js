'use strict';
/**
 * live-moves.js's player and outside pings, in a process of their own (as players are: the service's process never
 * carries them). `node live-moves-player.js HOST PORT USERNAME`, forked with an IPC channel: a mineflayer player
 * joins HOST:PORT; a server-list ping every 100 ms goes to the address the parent last sent ({ address }); it
 * reports { spawned }, { answered: ms } for each answer, { off: ms } when the player is disconnected, { error }, all
 * in ms since the epoch (performance.timeOrigin + now(), comparable across processes); { stop } ends it.
 */
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const ROOT = path.resolve(__dirname, '..', '..');
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const [host, port, username] = process.argv.slice(2);
let address = { host, port: Number(port) };
let probing = true;

async function answers({ host: h, port: p }) {
  const mc = require(path.join(ROOT, 'node_modules', 'minecraft-protocol'));
  return Promise.race([mc.ping({ host: h, port: p, version: '1.20' }).then(() => true, () => false), sleep(1000).then(() => false)]);
}

const mineflayer = require(path.join(ROOT, 'node_modules', 'mineflayer'));
const bot = mineflayer.createBot({ host, port: Number(port), username, auth: 'offline', version: '1.20', hideErrors: true });
bot.once('spawn', () => {
  process.send({ spawned: true });
  bot.once('end', () => process.send({ off: now() }));
  void (async () => {
    while (probing) {
      const t = now();
      if (await answers(address)) process.send({ answered: t });
      await sleep(Math.max(0, 100 - (now() - t)));
    }
  })();
});
bot.once('kicked', (reason) => process.send({ error: `kicked: ${reason}` }));
bot.once('error', (err) => process.send({ error: String(err) }));
process.on('message', (m) => {
  if (m.address) address = m.address;
  if (m.stop) {
    probing = false;
    bot.end();
    setTimeout(() => process.exit(0), 200);
  }
});
