// The docs' code samples work (issue 28 §4): every operation's curl, TypeScript and Python samples, exactly as
// scripts/build-docs.js puts them on the page (scripts/spec-samples.js), are run against a listening service,
// with its URL for the spec's placeholder host, a token in GSH_TOKEN, and the ids of real resources for the
// examples' ids. The TypeScript ones are type-checked together under --strict against openapi-typescript's types
// first. A sample must be well-formed and authorized: no 400, 401, 403, 415, 422 or 5xx. Python samples need
// python3 with requests; where that is missing they are left out, and the test says so.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { utils as sshUtils } from 'ssh2';
import ts from 'typescript';
import { loadSpec } from '../../src/spec';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { zipOf } from '../helpers/zip';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const samples = require('../../scripts/spec-samples.js');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const root = path.join(__dirname, '..', '..');
const spec = loadSpec().document as Json;
const placeholder: string = spec.servers[0].url;
const hasPython = spawnSync('python3', ['-c', 'import requests'], { encoding: 'utf8' }).status === 0;
const refused = [400, 401, 403, 415, 422];
/** How long one sample may take, in any language. */
const SAMPLE_TIMEOUT_MS = 30_000;

let t: TestApp;
let api: { base: string; close(): Promise<void> };
let token: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-samples-'));

beforeAll(async () => {
  // SFTP_PORT: getServerSftp's samples succeed (it says the port; no SFTP server is started).
  t = await createTestApp({ env: { STREAM_MAX_LIFETIME_S: '1', SFTP_PORT: '2022' }, webhooks: { lookup: async () => [{ address: '93.184.215.14', family: 4 }] } });
  api = await t.listen();
  token = t.token();
  fs.copyFileSync(path.join(root, 'generated', 'v1.ts'), path.join(dir, 'v1.ts'));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  // In CI (.ci/run installs python3-requests) a missing Python is a gap, not a skip.
  if (!hasPython && process.env.CI) throw new Error('python3 with requests is missing: .ci/run installs python3-requests');
  if (!hasPython) process.stdout.write('code-samples: python3 with requests is not installed here; the Python samples are not run.\n');
});
afterAll(async () => {
  await api.close();
  await t.finish();
  fs.rmSync(dir, { recursive: true, force: true });
});


/**
 * The examples' ids and the ids of real resources of the token's account, to put in their place; and what the
 * Files samples read: the installed server's world/level.dat, and beside the samples the files a reader would
 * have (the upload's server-icon.png, the world import's MyWorld.zip; scripts/spec-samples.js rawBody).
 */
async function realIds(): Promise<Array<[string, string]>> {
  const auth = { Authorization: `Bearer ${token}` };
  const server = (await t.http.post('/v1/servers').set(auth).send({ name: 'Sampled', plan: 'small', version: 'flying-squid-1.20.5' })).body.id;
  // Another key than createSshKey's example, which its samples register.
  const sshKey = (await t.http.post('/v1/ssh-keys').set(auth).send({ public_key: sshUtils.generateKeyPairSync('ed25519').public, name: 'sampled' })).body.id;
  fs.writeFileSync(path.join(dir, 'server-icon.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
  fs.writeFileSync(path.join(dir, 'MyWorld.zip'), await zipOf([['MyWorld/level.dat', 'a world'], ['MyWorld/region/r.0.0.mca', 'a region']]));
  const alert = (await t.http.post(`/v1/servers/${server}/alerts`).set(auth).send({ kind: 'crash' })).body.id;
  const webhook = (await t.http.post('/v1/webhooks').set(auth).send({ url: 'https://hooks.example.com/gsh', event_types: ['server.crashed'] })).body.id;
  const spare = (await t.http.post('/v1/tokens').set(auth).send({ name: 'spare', scopes: ['servers:read'] })).body.id;
  const member = (await t.http.post(`/v1/servers/${server}/members`).set(auth).send({ email: 'sampled@example.com', permissions: [] })).body.id;
  const schedule = (await t.http.post(`/v1/servers/${server}/schedules`).set(auth).send({ name: 'Sampled', cron: '0 4 * * *', tasks: [{ type: 'backup' }] })).body.id;
  const run = (await t.http.post(`/v1/servers/${server}/schedules/${schedule}/run`).set(auth)).body.id;
  await t.runtime.idle(); // the run ended (its backup task failed: the server is still installing), so another may begin
  await until('the server installed', async () => (await t.http.get(`/v1/servers/${server}`).set(auth)).body.state === 'stopped');
  expect((await t.http.put(`/v1/servers/${server}/files/content`).query({ path: 'world/level.dat' }).set(auth).set('Content-Type', 'application/octet-stream').send(Buffer.from('a world'))).status).toBe(201);
  const example = (name: string) => spec.components.schemas[name].example as string;
  return [
    [example('ServerId'), server], [example('AlertRuleId'), alert], [example('WebhookId'), webhook], [example('TokenId'), spare],
    [example('MemberId'), member], [example('ScheduleId'), schedule], [example('ScheduleRunId'), run], [example('SshKeyId'), sshKey],
  ];
}

test('every operation\'s curl, TypeScript and Python samples run against the service', async () => {
  const ids = await realIds();
  const order = (o: Json) => (o.method !== 'delete' ? 0 : o.op.operationId === 'deleteServer' ? 2 : 1);
  const ops: Json[] = samples.operations(spec).sort((a: Json, b: Json) => order(a) - order(b));
  const made = ops.map((o) => {
    let [curl, tsCode, py] = samples.codeSamples(spec, o, placeholder).map((c: { source: string }) => c.source) as string[];
    for (const [from, to] of [[placeholder, api.base], ...ids]) [curl, tsCode, py] = [curl, tsCode, py].map((s) => s.split(from).join(to));
    fs.writeFileSync(path.join(dir, `${o.op.operationId}.ts`), tsCode);
    return { id: o.op.operationId as string, tags: (o.op.tags ?? []) as string[], stream: samples.answerKind(spec, o.op) === 'stream', curl, tsCode, py };
  });
  // Every operation of the spec has its samples: counted here from the paths' methods, not by the sampler.
  const methods = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];
  expect(made).toHaveLength(Object.values(spec.paths as Json).flatMap((item) => Object.keys(item).filter((k) => methods.includes(k))).length);

  const env = { ...process.env, GSH_TOKEN: token };
  // Asynchronous: the service answers from this same process, so a spawnSync would wait on itself.
  const run = (cmd: string, args: string[], timeout = SAMPLE_TIMEOUT_MS) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(cmd, args, { cwd: dir, env, timeout });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      child.on('close', (code) => resolve({ code, out }));
    });
  // Type-checked together, as a reader's project would, against the types openapi-typescript makes; the compiler
  // runs while the samples do (it reads only the files written above).
  const tsc = run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--strict', '--noEmit', '--target', 'ES2022', '--module', 'ESNext', '--moduleResolution', 'Bundler', '--lib', 'ES2022,DOM,DOM.Iterable', '--types', 'node', '--typeRoots', path.join(root, 'node_modules', '@types'), '--skipLibCheck', ...made.map((m) => path.join(dir, `${m.id}.ts`))], 600_000);
  const python = hasPython ? pythonRunner(env) : undefined;
  const node = nodeRunner(env);
  const statusOf = (out: string) => Number(/^(\d{3})\b/m.exec(out)?.[1] ?? NaN);
  const wrong: string[] = [];
  // One operation at a time (deletions last, as ordered above), its three samples side by side: each is its own
  // client, as three readers would be, and an answer they change for each other (a 404 after another's delete, a
  // 409) is neither refused nor a 5xx.
  for (const m of made) {
    const js = ts.transpileModule(m.tsCode, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    fs.writeFileSync(path.join(dir, `${m.id}.mjs`), js);
    const [curl, nodeJs, py] = await Promise.all([
      // curl: its answer's status after the body (-w is added here; the sample is otherwise as shown).
      run('bash', ['-c', `${m.curl} -w '\\n%{http_code}'`]),
      // TypeScript: transpiled as it stands (the types are erased) and run as a module; it prints the status
      // first, or, for a stream, throws on one that is not 2xx.
      node.run(path.join(dir, `${m.id}.mjs`)),
      python?.run(m.id, m.py),
    ]);
    const curlStatus = Number(curl.out.trim().split('\n').pop());
    // (createSshKey's example key is registered by whichever of the three comes first: the others get 409
    // ssh_key_exists, a conflict, not a refusal of the request.)
    const isRefused = (status: number) => refused.includes(status);
    if (curl.code !== 0 || isRefused(curlStatus) || curlStatus >= 500) wrong.push(`${m.id} curl: ${curl.code} ${curl.out.slice(-300)}`);
    if (nodeJs.code !== 0 || (!m.stream && (isRefused(statusOf(nodeJs.out)) || !(statusOf(nodeJs.out) < 500)))) wrong.push(`${m.id} TypeScript: ${nodeJs.code} ${nodeJs.out.slice(0, 300)}`);
    if (py && (py.code !== 0 || (!m.stream && (isRefused(statusOf(py.out)) || !(statusOf(py.out) < 500))))) wrong.push(`${m.id} Python: ${py.code} ${py.out.slice(0, 300)}`);
    // The Files and SSH keys samples have what they read or change (realIds): one of the three at least succeeds.
    const statuses = [curlStatus, statusOf(nodeJs.out), ...(py ? [statusOf(py.out)] : [])];
    if (m.tags.some((tag) => tag === 'Files' || tag === 'SSH keys') && !statuses.some((x) => x >= 200 && x < 300)) wrong.push(`${m.id}: no sample succeeded (${statuses.join(', ')})`);
  }
  python?.close();
  node.close();
  const checked = await tsc;
  expect([checked.code, checked.out.trim()]).toEqual([0, '']);
  expect(wrong).toEqual([]);
}, 600_000);

/**
 * One interpreter runs all of a language's samples, each a file of its own that it runs as its own program would
 * (below), catching its output and exit status. Starting an interpreter and loading the HTTP library cost more CPU
 * than most samples do (python3 with requests 0.2 s, Node with openapi-fetch 0.17 s), 67 times over in each
 * language. A sample's file is named on stdin; the runner answers with one JSON line, { code, out }.
 */
function sampleRunner(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd: dir, env, stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: Array<(r: { code: number | null; out: string }) => void> = [];
  let buffered = '';
  let stray = ''; // what a sample wrote past the redirection (os.write(1, …)): kept with its answer
  child.stdout.on('data', (d: Buffer) => {
    buffered += d;
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      let answer: { code: number | null; out: string };
      try {
        answer = JSON.parse(line);
      } catch {
        stray += `${line}\n`;
        continue;
      }
      waiting.shift()?.({ code: answer.code, out: stray + answer.out });
      stray = '';
    }
  });
  let ended: string | undefined;
  child.stdin.on('error', () => undefined); // a write after the runner ended: that sample fails below
  child.on('close', (code, signal) => {
    ended = `the ${path.basename(command)} runner ended (${signal ?? code})`;
    for (const w of waiting.splice(0)) w({ code: 1, out: ended });
  });
  return {
    run(file: string) {
      if (ended) return Promise.resolve({ code: 1, out: ended });
      return new Promise<{ code: number | null; out: string }>((resolve) => {
        // A sample that hangs ends the runner, and every sample still waiting fails.
        const timer = setTimeout(() => child.kill(), SAMPLE_TIMEOUT_MS);
        waiting.push((answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        child.stdin.write(`${file}\n`);
      });
    },
    close: () => child.stdin.end(),
  };
}

/** Python: each sample run by runpy.run_path, as `python3 sample.py` runs it (the file as __main__ in a namespace of its own). */
function pythonRunner(env: NodeJS.ProcessEnv) {
  const script = [
    'import contextlib, io, json, runpy, sys, traceback',
    'for line in sys.stdin:',
    '    out, code = io.StringIO(), 0',
    '    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):',
    '        try:',
    '            runpy.run_path(line.strip(), run_name="__main__")',
    '        except SystemExit as e:',
    '            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)',
    '        except BaseException:',
    '            traceback.print_exc()',
    '            code = 1',
    '    print(json.dumps({"code": code, "out": out.getvalue()}), flush=True)',
  ].join('\n');
  const runner = sampleRunner('python3', ['-c', script], env);
  return {
    run(id: string, source: string) {
      const file = path.join(dir, `${id}.py`);
      fs.writeFileSync(file, source);
      return runner.run(file);
    },
    close: runner.close,
  };
}

/**
 * Node: each transpiled sample imported as an ES module, as `node sample.mjs` runs it (a file of its own, so a
 * module of its own; its top-level await settles once its last request has). What it writes to stdout or stderr,
 * console.log included, is its output; a rejection is exit status 1, as an uncaught error at the top level is.
 */
function nodeRunner(env: NodeJS.ProcessEnv) {
  const file = path.join(dir, 'run-samples.mjs');
  fs.writeFileSync(file, [
    "import readline from 'node:readline';",
    "import { pathToFileURL } from 'node:url';",
    'const answer = process.stdout.write.bind(process.stdout);',
    "let out = '';",
    'const capture = (chunk, ...rest) => {',
    "  out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();",
    "  rest.find((f) => typeof f === 'function')?.();",
    '  return true;',
    '};',
    'process.stdout.write = capture;',
    'process.stderr.write = capture;',
    'for await (const line of readline.createInterface({ input: process.stdin })) {',
    "  out = '';",
    '  let code = 0;',
    '  try {',
    '    await import(pathToFileURL(line.trim()).href);',
    '  } catch (err) {',
    "    out += `${err?.stack ?? err}\\n`;",
    '    code = 1;',
    '  }',
    "  answer(`${JSON.stringify({ code, out })}\\n`);",
    '}',
  ].join('\n'));
  return sampleRunner(process.execPath, [file], env);
}

test('the quickstart\'s webhook checks accept a delivery the service signed, and refuse a changed or old one', async () => {
  const { sign } = await import('../../src/webhooks/send');
  const description: string = spec.info.description;
  const from = description.indexOf('**Verify a webhook.**');
  const [js, py] = [/```js\n([\s\S]*?)```/, /```python\n([\s\S]*?)```/].map((re) => re.exec(description.slice(from))![1].replace(/^ {3}/gm, ''));
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', server_id: null, created_at: '2026-11-22T08:15:30.000Z', data: {} });
  const now = Math.floor(Date.now() / 1000);
  const headers = (ts: number, b = body) => ({ 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': sign(secret, 'evt_1', ts, b) });
  const cases: Array<[string, Record<string, string>, string, boolean]> = [
    ['as sent', headers(now), body, true],
    ['a changed body', headers(now), body.replace('webhook.test', 'server.deleted'), false],
    ['ten minutes old', headers(now - 600, body), body, false],
    ['another secret\'s signature', { ...headers(now), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }, body, false],
  ];
  // Node: the function as shown, its import replaced by the module it names.
  const verify = new Function('crypto', `${js.replace(/^import .*$/m, '')}; return verifyWebhook;`)(await import('node:crypto'));
  expect(cases.map(([name, h, b]) => [name, verify(secret, h, b)])).toEqual(cases.map(([name, , , ok]) => [name, ok]));
  if (!hasPython) return void process.stdout.write('code-samples: python3 is not installed here; the Python webhook check is not run.\n');
  const script = `${py}\nimport json, sys\nfor h, b in json.load(sys.stdin):\n    print(verify_webhook(${JSON.stringify(secret)}, h, b.encode()))\n`;
  const res = spawnSync('python3', ['-c', script], { input: JSON.stringify(cases.map(([, h, b]) => [h, b])), encoding: 'utf8' });
  expect(res.stdout.trim().split('\n')).toEqual(cases.map(([, , , ok]) => (ok ? 'True' : 'False')));
});
