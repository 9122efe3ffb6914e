'use strict';
/**
 * `npm run bench -- files` (issue 40 §5; docs/architecture.md "Server files", "SFTP"): a server's files through the
 * service, each against a bare baseline in the same run. The service runs in a child process (files-service.js:
 * startService, HTTP and SFTP on 127.0.0.1, RUNTIME=local), so its CPU and memory are its own.
 * - API upload and download of a `mb` MB file (random bytes) vs `cp` of the same file on the same disk; rounds
 *   alternated, medians; ratio = cp's time ÷ the API's (target ≥ 0.7). The client streams from and to a file.
 *   In the same rounds, the ceiling of any Node.js HTTP server here: a minimal node:http server (files-ceiling.js,
 *   its own child process) piping the body into a file and the file into the answer, once with Node's default
 *   stream buffers and once with 1 MiB ones; its time ÷ cp's, and ours ÷ its.
 * - SFTP `put` and `get` of the same file with OpenSSH's `sftp` client: our server vs OpenSSH's own sftp-server
 *   behind an sshd started here on loopback (Debian's openssh-server: /usr/sbin/sshd, /usr/lib/openssh/sftp-server),
 *   both with the same cipher (aes128-gcm@openssh.com) and key login; ratio = OpenSSH's time ÷ ours (target ≥ 0.5).
 *   Skipped, and said so, where openssh-server is not installed.
 * - Listing a folder of `files` files: GET …/files?path=many (the first page of 100, and of 1,000: the folder is
 *   read and sorted whole either way), p50 and p99 of `listRounds` (target p50 < 100 ms).
 * - World import: a zip of about `zipMb` MB (region files, mostly incompressible) through POST …/files/extract;
 *   its time vs `unzip -q` of the same zip, and the service's peak RSS during it (VmHWM after a reset through
 *   /proc/<pid>/clear_refs, and RSS sampled every 20 ms) against its RSS before: the archive is streamed to a
 *   file and unpacked entry by entry, never held in memory.
 * Docker nodes: files-node.js (the same API transfers, RUNTIME=docker, against the engine's own archive endpoint).
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFileSync, fork, spawn, spawnSync } = require('node:child_process');
const { pipeline } = require('node:stream/promises');
const { tempDir, median, quantile, msSince, nextMessage, stopChild, sleep, fmt } = require('./lib');
const { client, waitFor } = require('./runtime');

const SFTP_PORT = 28950;
const SSHD_PORT = 28951;
const SSHD = '/usr/sbin/sshd';
const SFTP_SERVER = '/usr/lib/openssh/sftp-server';
const CIPHER = 'aes128-gcm@openssh.com';
/** The stream buffers of the tuned ceiling (files-ceiling.js), the size the service's file streams use. */
const CEILING_BUFFER = 1024 * 1024;

/** A file of `mb` MB of random bytes. */
function randomFile(file, mb) {
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < mb; i++) fs.writeSync(fd, crypto.randomBytes(1 << 20));
  fs.closeSync(fd);
}

/** One request with a file as its body (Content-Length set) or its answer written to a file; resolves with ms. */
function transfer(port, token, method, url, { from, to }) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const headers = { Authorization: `Bearer ${token}` };
    if (from) Object.assign(headers, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(fs.statSync(from).size) });
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers }, (res) => {
      const sink = to ? fs.createWriteStream(to) : null;
      const done = () => (res.statusCode < 300 ? resolve(msSince(t0)) : reject(new Error(`${method} ${url}: ${res.statusCode}`)));
      if (sink && res.statusCode < 300) pipeline(res, sink).then(done, reject);
      else {
        res.resume();
        res.on('end', done);
      }
    });
    req.on('error', reject);
    if (from) fs.createReadStream(from).pipe(req);
    else req.end();
  });
}

const cpMs = (a, b) => {
  const t0 = process.hrtime.bigint();
  execFileSync('cp', [a, b]);
  return msSince(t0);
};

/**
 * The ceiling of an HTTP transfer here: a minimal node:http server in a child process (files-ceiling.js) piping
 * the body into a file and a file into the answer, its streams' buffers `buffer` bytes or Node's `default`.
 */
async function startCeiling(dir, buffer) {
  const folder = fs.mkdtempSync(path.join(dir, 'ceiling-'));
  const child = fork(path.join(__dirname, 'files-ceiling.js'), [folder, String(buffer)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await nextMessage(child, (m) => m.type === 'listening', 30_000);
  return { name: buffer === 'default' ? 'node_default' : `node_${buffer / 1024}k`, child, port, folder, up: [], down: [] };
}

/** Ours, `cp` and each bare Node.js ceiling in turn every round; medians; ratios of ours to `cp` and to each ceiling. */
async function apiTransfers(s, id, mb, rounds) {
  const src = path.join(s.work, 'big.bin');
  const up = [];
  const down = [];
  const cpUp = [];
  const cpDown = [];
  const game = path.join(s.dir, 'servers', id);
  const ceilings = [await startCeiling(s.dir, 'default'), await startCeiling(s.dir, CEILING_BUFFER)];
  try {
    for (let r = 0; r < rounds; r++) {
      up.push(await transfer(s.port, s.token, 'PUT', `/v1/servers/${id}/files/content?path=big-${r}.bin`, { from: src }));
      cpUp.push(cpMs(src, path.join(game, `cp-${r}.bin`)));
      down.push(await transfer(s.port, s.token, 'GET', `/v1/servers/${id}/files/content?path=big-${r}.bin`, { to: path.join(s.work, 'down.bin') }));
      cpDown.push(cpMs(path.join(game, `big-${r}.bin`), path.join(s.work, 'cp-down.bin')));
      if (!fs.readFileSync(path.join(s.work, 'down.bin')).equals(fs.readFileSync(src))) throw new Error('the download differs from the upload');
      for (const f of [`big-${r}.bin`, `cp-${r}.bin`]) fs.rmSync(path.join(game, f));
      for (const c of ceilings) {
        c.up.push(await transfer(c.port, s.token, 'PUT', `/big-${r}.bin`, { from: src }));
        c.down.push(await transfer(c.port, s.token, 'GET', `/big-${r}.bin`, { to: path.join(s.work, 'down.bin') }));
        fs.rmSync(path.join(c.folder, `big-${r}.bin`));
      }
    }
  } finally {
    for (const c of ceilings) await stopChild(c.child, 5_000);
  }
  const u = median(up);
  const d = median(down);
  const side = (ms, cp, key) => ({
    api_ms: ms, cp_ms: cp, api_mb_s: mb / (ms / 1000), ratio: cp / ms,
    ceilings: Object.fromEntries(ceilings.map((c) => [c.name, { ms: median(c[key]), mb_s: mb / (median(c[key]) / 1000), of_cp: cp / median(c[key]), ours_of_it: median(c[key]) / ms }])),
  });
  return { mb, upload: side(u, median(cpUp), 'up'), download: side(d, median(cpDown), 'down') };
}

/** An sshd of our own on loopback serving OpenSSH's sftp-server, logging in `key` as this user; null without one. */
async function startSshd(work, key) {
  if (!fs.existsSync(SSHD) || !fs.existsSync(SFTP_SERVER)) return null;
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // its privilege separation directory
  const hostKey = path.join(work, 'sshd_host_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  fs.copyFileSync(`${key}.pub`, path.join(work, 'authorized_keys'));
  const config = path.join(work, 'sshd_config');
  fs.writeFileSync(config, [
    `Port ${SSHD_PORT}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKey}`, `AuthorizedKeysFile ${path.join(work, 'authorized_keys')}`,
    'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no', 'PermitRootLogin prohibit-password',
    `PidFile ${path.join(work, 'sshd.pid')}`, `Subsystem sftp ${SFTP_SERVER}`, '',
  ].join('\n'));
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  await waitFor(async () => child.exitCode === null && (await new Promise((r) => {
    const sock = require('node:net').connect(SSHD_PORT, '127.0.0.1', () => r(sock.end() || true)).on('error', () => r(false));
  })), 10_000, `sshd (${err})`, 50);
  fs.writeFileSync(path.join(work, 'known_hosts'), `[127.0.0.1]:${SSHD_PORT} ${fs.readFileSync(`${hostKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
  return child;
}

/** OpenSSH's sftp in batch mode with `commands`; its time in ms. */
function sftpBatch(work, key, user, port, commands) {
  const batch = path.join(work, 'batch');
  fs.writeFileSync(batch, `${commands.join('\n')}\n`);
  const t0 = process.hrtime.bigint();
  const r = spawnSync('sftp', [
    '-b', batch, '-P', String(port), '-F', '/dev/null', '-i', key, '-c', CIPHER,
    '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${path.join(work, 'known_hosts')}`,
    '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', `${user}@127.0.0.1`,
  ], { cwd: work, encoding: 'utf8', timeout: 600_000 });
  const ms = msSince(t0);
  if (r.status !== 0) throw new Error(`sftp ${commands.join('; ')} on port ${port}: ${r.status} ${r.stderr}`);
  return ms;
}

async function sftpTransfers(s, id, mb, rounds) {
  const key = path.join(s.work, 'id_ed25519');
  const sshd = await startSshd(s.work, key);
  if (!sshd) {
    console.log(`  sftp: skipped, no ${SSHD} and ${SFTP_SERVER} (apt-get install openssh-server)`);
    return null;
  }
  try {
    // Our host key, known to the client as the sshd's is.
    const pub = fs.readFileSync(path.join(s.dir, 'sftp', 'ssh_host_ed25519_key.pub'), 'utf8');
    fs.appendFileSync(path.join(s.work, 'known_hosts'), `[127.0.0.1]:${SFTP_PORT} ${pub.split(' ').slice(0, 2).join(' ')}\n`);
    const theirs = fs.mkdtempSync(path.join(s.dir, 'openssh-'));
    const ours = { put: [], get: [] };
    const openssh = { put: [], get: [] };
    const user = `${id}.bench@example.com`;
    const root = require('node:os').userInfo().username;
    for (let r = 0; r < rounds; r++) {
      ours.put.push(sftpBatch(s.work, key, user, SFTP_PORT, ['put big.bin sftp.bin']));
      openssh.put.push(sftpBatch(s.work, key, root, SSHD_PORT, [`put big.bin ${theirs}/sftp.bin`]));
      ours.get.push(sftpBatch(s.work, key, user, SFTP_PORT, ['get sftp.bin got.bin']));
      openssh.get.push(sftpBatch(s.work, key, root, SSHD_PORT, [`get ${theirs}/sftp.bin got-openssh.bin`]));
    }
    if (!fs.readFileSync(path.join(s.work, 'got.bin')).equals(fs.readFileSync(path.join(s.work, 'big.bin')))) throw new Error('the SFTP download differs');
    const side = (k) => ({ ours_ms: median(ours[k]), openssh_ms: median(openssh[k]), ours_mb_s: mb / (median(ours[k]) / 1000), openssh_mb_s: mb / (median(openssh[k]) / 1000), ratio: median(openssh[k]) / median(ours[k]) });
    return { mb, cipher: CIPHER, put: side('put'), get: side('get') };
  } finally {
    sshd.kill();
  }
}

async function listing(s, id, files, rounds) {
  const folder = path.join(s.dir, 'servers', id, 'many');
  fs.mkdirSync(folder);
  for (let i = 0; i < files; i++) fs.writeFileSync(path.join(folder, `chunk-${String(i).padStart(5, '0')}.dat`), 'x');
  const result = { files };
  // The client's pooled connection may have idled past the server's keep-alive during the SFTP part: one warm-up.
  await s.api('GET', `/v1/servers/${id}`).catch(() => s.api('GET', `/v1/servers/${id}`));
  for (const limit of [100, 1000]) {
    const ms = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = process.hrtime.bigint();
      const page = await s.api('GET', `/v1/servers/${id}/files?path=many&limit=${limit}`);
      ms.push(msSince(t0));
      if (page.data.length !== limit) throw new Error(`a page of ${page.data.length}`);
    }
    result[`limit_${limit}`] = { p50_ms: median(ms.slice(1)), p99_ms: quantile(ms.slice(1), 0.99), first_ms: ms[0] };
  }
  fs.rmSync(folder, { recursive: true });
  return result;
}

/** A zip of a world: `mb` region files of 1 MiB (random: a world's chunks are compressed already), level.dat. */
function worldZip(work, mb) {
  const src = path.join(work, 'zip-src');
  fs.mkdirSync(path.join(src, 'world', 'region'), { recursive: true });
  fs.writeFileSync(path.join(src, 'world', 'level.dat'), crypto.randomBytes(4096));
  for (let i = 0; i < mb; i++) fs.writeFileSync(path.join(src, 'world', 'region', `r.${i % 10}.${Math.floor(i / 10)}.mca`), crypto.randomBytes(1 << 20));
  const zip = path.join(work, 'world.zip');
  execFileSync('zip', ['-q', '-r', '-1', zip, 'world'], { cwd: src });
  fs.rmSync(src, { recursive: true });
  return zip;
}

/** RSS and its high-water mark of `pid`, in bytes (proc(5) VmRSS, VmHWM). */
function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

async function worldImport(s, id, zipMb, rounds) {
  const zip = worldZip(s.work, zipMb);
  const size = fs.statSync(zip).size;
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const folder = `import-${r}`;
    await sleep(500);
    const before = rssOf(s.pid).rss;
    // Resets VmHWM to the RSS now (proc(5) clear_refs "5"), so the mark after is this import's peak.
    try {
      fs.writeFileSync(`/proc/${s.pid}/clear_refs`, '5');
    } catch {
      // not ours to reset (not root): the sampled peak below still holds
    }
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(s.pid).rss)), 20);
    const ms = await transfer(s.port, s.token, 'POST', `/v1/servers/${id}/files/extract?path=${folder}&replace=folder&strip_components=1`, { from: zip });
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(s.pid).hwm);
    const out = path.join(s.work, `unzip-${r}`);
    const t0 = process.hrtime.bigint();
    execFileSync('unzip', ['-q', zip, '-d', out]);
    const unzipMs = msSince(t0);
    fs.rmSync(out, { recursive: true });
    if (!fs.existsSync(path.join(s.dir, 'servers', id, folder, 'level.dat'))) throw new Error('the import left no level.dat');
    fs.rmSync(path.join(s.dir, 'servers', id, folder), { recursive: true });
    runs.push({ ms, unzipMs, before, peak });
  }
  const pick = (k) => median(runs.map((x) => x[k]));
  return {
    zip_mb: size / 2 ** 20, ms: pick('ms'), unzip_ms: pick('unzipMs'), ratio: pick('unzipMs') / pick('ms'),
    rss_before_mb: pick('before') / 2 ** 20, rss_peak_mb: pick('peak') / 2 ** 20, rss_growth_mb: (pick('peak') - pick('before')) / 2 ** 20,
  };
}

async function runFiles({ mb = 200, rounds = 3, files = 10_000, listRounds = 51, zipMb = 100, importRounds = 3 } = {}) {
  const dir = tempDir('files');
  const work = tempDir('files-client');
  const child = fork(path.join(__dirname, 'files-service.js'), [dir, String(SFTP_PORT)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { port, token, ssh2Native } = await nextMessage(child, (m) => m.type === 'listening', 180_000);
    const s = { dir, work, port, token, pid: child.pid, api: client(port, token) };
    const id = (await s.api('POST', '/v1/servers', { name: 'bench-files', plan: 'large', version: 'flying-squid-1.20' })).id;
    await waitFor(async () => (await s.api('GET', `/v1/servers/${id}`)).state === 'stopped', 120_000, 'the install', 100);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', path.join(work, 'id_ed25519')]);
    await s.api('POST', '/v1/ssh-keys', { public_key: fs.readFileSync(path.join(work, 'id_ed25519.pub'), 'utf8') });
    randomFile(path.join(work, 'big.bin'), mb);

    const api = await apiTransfers(s, id, mb, rounds);
    for (const [way, x] of [['upload', api.upload], ['download', api.download]]) {
      const bare = Object.entries(x.ceilings).map(([name, c]) => `${name} ${fmt(c.ms)} ms (${fmt(c.of_cp, 2)} of cp; ours ${fmt(c.ours_of_it, 2)} of it)`).join(', ');
      console.log(`  API ${mb} MB ${way}: ${fmt(x.api_ms)} ms, ${fmt(x.api_mb_s)} MB/s; cp ${fmt(x.cp_ms)} ms, ratio ${fmt(x.ratio, 2)}; bare Node: ${bare}`);
    }
    const sftp = await sftpTransfers(s, id, mb, rounds);
    if (sftp) sftp.ssh2_native_crypto = ssh2Native;
    if (sftp) console.log(`  SFTP ${mb} MB (ssh2's crypto binding ${ssh2Native ? 'loaded' : 'NOT loaded: node:crypto per packet'}): put ${fmt(sftp.put.ours_mb_s)} vs OpenSSH ${fmt(sftp.put.openssh_mb_s)} MB/s (ratio ${fmt(sftp.put.ratio, 2)}), get ${fmt(sftp.get.ours_mb_s)} vs ${fmt(sftp.get.openssh_mb_s)} MB/s (ratio ${fmt(sftp.get.ratio, 2)})`);
    const list = await listing(s, id, files, listRounds);
    console.log(`  list ${files} files: p50 ${fmt(list.limit_100.p50_ms, 1)} ms (limit 100), ${fmt(list.limit_1000.p50_ms, 1)} ms (limit 1000)`);
    const imported = await worldImport(s, id, zipMb, importRounds);
    console.log(`  import a ${fmt(imported.zip_mb)} MB zip: ${fmt(imported.ms)} ms (unzip ${fmt(imported.unzip_ms)} ms), RSS ${fmt(imported.rss_before_mb)} → peak ${fmt(imported.rss_peak_mb)} MB`);
    return { api, sftp, list, import: imported };
  } finally {
    await stopChild(child, 30_000);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

module.exports = { runFiles, randomFile, transfer };
