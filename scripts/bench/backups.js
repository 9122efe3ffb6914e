'use strict';
/**
 * `npm run bench -- backups` (docs/architecture.md "Backups"):
 * - archive throughput: the service's own archive() (the local storage's `tar -cf` gzipped in the service, through a
 *   SHA-256 into a fsynced file) against plain
 *   `tar -czf FILE` of the same world folder; three alternated rounds each, medians; ratio = tar's time ÷ ours
 *   (target ≥ 0.7: ours at least 70% of tar's speed);
 * - download memory: the service (startService, in this process) streams a ready backup's archive of `mb` MB
 *   through GET …/archive to a client that discards it; RSS is sampled every 20 ms; growth = peak − before
 *   (target < 30 MB). The client runs in the same process, so its buffers count too: an upper bound.
 * The world: `mb` MB in 1 MiB files, half random bytes (incompressible), half repeated text.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { dist, tempDir, median, msSince } = require('./lib');

function makeWorld(mb) {
  const dir = tempDir('backup-world');
  fs.mkdirSync(path.join(dir, 'world'));
  const text = Buffer.from('minecraft:stone minecraft:dirt minecraft:grass_block '.repeat(20_000)).subarray(0, 1 << 20);
  for (let i = 0; i < mb; i++) fs.writeFileSync(path.join(dir, 'world', `r.${i}.mca`), i % 2 ? text : crypto.randomBytes(1 << 20));
  return dir;
}

async function throughput(dir, mb, rounds) {
  const { archive } = dist('runtime/backups');
  const { tarOf } = dist('runtime/local-storage');
  const ours = [];
  const tar = [];
  for (let r = 0; r < rounds; r++) {
    const a = path.join(dir, `ours-${r}.tar.gz`);
    let t0 = process.hrtime.bigint();
    await archive(() => tarOf(dir, ['world']), a);
    ours.push(msSince(t0));
    const b = path.join(dir, `tar-${r}.tar.gz`);
    t0 = process.hrtime.bigint();
    execFileSync('tar', ['-czf', b, '-C', dir, 'world']);
    tar.push(msSince(t0));
    fs.rmSync(a);
    fs.rmSync(b);
  }
  const o = median(ours);
  const t = median(tar);
  return { mb, ours_ms: o, tar_ms: t, ours_mb_s: mb / (o / 1000), tar_mb_s: mb / (t / 1000), ratio: t / o };
}

async function downloadRss(mb) {
  const { loadConfig } = dist('config');
  const { startService } = dist('service');
  const { silentLogger } = dist('log');
  const dir = tempDir('backup-dl');
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', GAME_PORT_RANGE: '27850-27859' });
  const service = await startService(config, silentLogger);
  try {
    const user = service.store.users.ensure('bench@example.com');
    const { token } = service.store.tokens.create(user.id, { name: 'bench', scopes: ['servers:read'] });
    const server = service.store.servers.create(user.id, { name: 'big', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
    const created = service.store.backups.create(server.id, null, { limit: 10 });
    const file = path.join(dir, 'backups', server.id, `${created.backup.id}.tar.gz`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, 'w');
    for (let i = 0; i < mb; i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
    fs.closeSync(fd);
    service.store.backups.markReady(created.backup.id, { consistency: 'stop', sizeBytes: mb << 20, sha256: '0'.repeat(64) });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const t0 = process.hrtime.bigint();
    const bytes = await new Promise((resolve, reject) => {
      const url = `http://127.0.0.1:${service.http.address().port}/v1/servers/${server.id}/backups/${created.backup.id}/archive`;
      http.get(url, { headers: { Authorization: `Bearer ${token}` } }, (res) => {
        let n = 0;
        res.on('data', (c) => (n += c.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`status ${res.statusCode}`))));
      }).on('error', reject);
    });
    const ms = msSince(t0);
    clearInterval(sampler);
    return { mb, bytes, seconds: ms / 1000, rss_before_mb: before / 2 ** 20, rss_peak_mb: peak / 2 ** 20, rss_growth_mb: (peak - before) / 2 ** 20 };
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runBackups({ worldMb = 200, downloadMb = 200, rounds = 3 } = {}) {
  const world = makeWorld(worldMb);
  try {
    const t = await throughput(world, worldMb, rounds);
    console.log(`  archive ${t.mb} MB: ours ${t.ours_mb_s.toFixed(1)} MB/s, tar ${t.tar_mb_s.toFixed(1)} MB/s (ratio ${t.ratio.toFixed(2)})`);
    const d = await downloadRss(downloadMb);
    console.log(`  download ${d.mb} MB in ${d.seconds.toFixed(2)} s: RSS ${d.rss_before_mb.toFixed(0)} → peak ${d.rss_peak_mb.toFixed(0)} MB (+${d.rss_growth_mb.toFixed(1)})`);
    return { throughput: t, download: d };
  } finally {
    fs.rmSync(world, { recursive: true, force: true });
  }
}

module.exports = { runBackups };
