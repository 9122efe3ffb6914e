// The spec is the product for client authors (issue 15; docs/conventions.md "The contract"): eight independent
// npm generators, none needing a JVM or a download, make clients from openapi/v1.yaml; each must compile under
// `tsc --strict` with no `any` in the types made from our schemas, and a program on each client (sdk-drivers/, as a
// client author would write it) drives create → start → metrics → stop → delete against one listening service
// running the fake game (game ports 29160-29169). A client made from an earlier spec survives the values a later
// one adds (issue 42 §3; openapi/v1.yaml "Evolution").
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { createTestApp, type TestApp } from '../helpers/app';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = path.join(__dirname, '..', '..');
const spec = path.join(root, 'openapi', 'v1.yaml');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-sdk-'));
// Clients import their generator's runtime (openapi-zod-client: @zodios/core, zod and axios; oazapfts:
// @oazapfts/runtime; openapi-typescript's types: openapi-fetch), as a client author's project has them installed:
// linked from ours, and only those, so tsc takes no other package's types (its automatic @types) into the programs.
for (const pkg of ['@zodios', 'zod', 'axios', '@oazapfts', 'openapi-fetch']) {
  fs.mkdirSync(path.join(out, 'node_modules'), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules', pkg), path.join(out, 'node_modules', pkg));
}
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

function run(bin: string, args: string[], cwd = out): { status: number | null; output: string } {
  const res = spawnSync(process.execPath, [path.join(root, 'node_modules', bin), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    timeout: 240_000,
  });
  return { status: res.status, output: `${res.stdout}\n${res.stderr}` };
}

/** tsc --strict over `files`, as a client author's project would (ES2022 + DOM, bundler resolution). */
function strictTsc(files: string[], extra: string[] = ['--noEmit']) {
  return run('typescript/bin/tsc', [
    '--strict', '--target', 'ES2022', '--lib', 'ES2022,DOM,DOM.Iterable', '--module', 'ESNext',
    '--moduleResolution', 'Bundler', '--skipLibCheck', '--noUnusedLocals', 'false', ...extra, ...files,
  ]);
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

/** `any` left in code once comments are gone. */
function anys(code: string): string[] {
  const bare = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return bare.split('\n').filter((line) => /\bany\b/.test(line)).map((l) => l.trim());
}

interface Generator {
  name: string;
  /** Its program in sdk-drivers/: `<driver>-lifecycle.ts`. */
  driver: string;
  generate(dir: string): { status: number | null; output: string };
  /** The files holding the types generated from our schemas (the generator's own runtime is not ours to judge). */
  types(dir: string): string;
}

const generators: Generator[] = [
  {
    name: 'openapi-typescript 7.13.0',
    driver: 'openapi-typescript',
    generate: (dir) => run('openapi-typescript/bin/cli.js', [spec, '-o', path.join(dir, 'v1.ts')]),
    types: (dir) => fs.readFileSync(path.join(dir, 'v1.ts'), 'utf8'),
  },
  {
    name: 'openapi-typescript-codegen 0.31.0',
    driver: 'otc',
    generate: (dir) => run('openapi-typescript-codegen/bin/index.js', ['--input', spec, '--output', dir, '--client', 'fetch']),
    types: (dir) => tsFiles(path.join(dir, 'models')).map((f) => fs.readFileSync(f, 'utf8')).join('\n'),
  },
  {
    name: 'swagger-typescript-api 13.3.1',
    driver: 'swagger-typescript-api',
    generate: (dir) => run('swagger-typescript-api/dist/cli.mjs', ['generate', '--path', spec, '--output', dir, '--name', 'api.ts']),
    // Its file holds the types first, then its own HttpClient (whose request helpers take `any` by design).
    types: (dir) => fs.readFileSync(path.join(dir, 'api.ts'), 'utf8').split('export type QueryParamsType')[0],
  },
  {
    name: '@hey-api/openapi-ts 0.90.8',
    driver: 'hey-api',
    generate: (dir) => run('@hey-api/openapi-ts/bin/run.js', ['-i', spec, '-o', dir]),
    types: (dir) => fs.readFileSync(path.join(dir, 'types.gen.ts'), 'utf8'),
  },
  {
    // kubb reads a config file, not flags: its ts and fetch client plugins, the client's runtime bundled into the
    // output, no formatter or linter run, and `unknown` (not `any`) where a response has no body.
    name: 'kubb 4.39.3',
    driver: 'kubb',
    generate: (dir) => {
      const nm = (pkg: string) => JSON.stringify(path.join(root, 'node_modules', pkg));
      fs.writeFileSync(path.join(dir, 'kubb.config.cjs'), [
        `const { defineConfig } = require(${nm('@kubb/core')});`,
        `const { pluginOas } = require(${nm('@kubb/plugin-oas')});`,
        `const { pluginTs } = require(${nm('@kubb/plugin-ts')});`,
        `const { pluginClient } = require(${nm('@kubb/plugin-client')});`,
        'module.exports = defineConfig({',
        `  root: ${JSON.stringify(dir)},`,
        `  input: { path: ${JSON.stringify(spec)} },`,
        "  output: { path: './gen', clean: true, format: false, lint: false, extension: { '.ts': '' } },",
        "  plugins: [pluginOas({ generators: [] }), pluginTs({ unknownType: 'unknown', emptySchemaType: 'unknown' }), pluginClient({ client: 'fetch', bundle: true })],",
        '});',
      ].join('\n'));
      // Silent: its log names every file written (FieldError.ts…); a failure is its exit status.
      return run('@kubb/cli/bin/kubb.cjs', ['generate', '--config', path.join(dir, 'kubb.config.cjs'), '--logLevel', 'silent'], dir);
    },
    types: (dir) => tsFiles(path.join(dir, 'gen', 'types')).map((f) => fs.readFileSync(f, 'utf8')).join('\n'),
  },
  {
    // Its fetch client calls the project's own fetch function (its `mutator`, sdk-drivers/orval-fetch.ts), as orval's
    // guide sets a base URL: the generated functions take none. A config file, as the mutator is not a flag.
    name: 'orval 7.13.2',
    driver: 'orval',
    generate: (dir) => {
      fs.copyFileSync(path.join(__dirname, 'sdk-drivers', 'orval-fetch.ts'), path.join(dir, 'fetcher.ts'));
      const output = { target: path.join(dir, 'api.ts'), client: 'fetch', override: { mutator: { path: path.join(dir, 'fetcher.ts'), name: 'customFetch' } } };
      fs.writeFileSync(path.join(dir, 'orval.config.cjs'), `module.exports = ${JSON.stringify({ gsh: { input: { target: spec }, output } })};\n`);
      return run('orval/dist/bin/orval.js', ['--config', path.join(dir, 'orval.config.cjs')]);
    },
    types: (dir) => fs.readFileSync(path.join(dir, 'api.ts'), 'utf8'),
  },
  {
    name: 'openapi-zod-client 1.18.3',
    driver: 'zod-client',
    generate: (dir) => zodClient(spec, dir),
    // Zod schemas, the types inferred from them; its descriptions are template strings, whose words are no type.
    types: (dir) => fs.readFileSync(path.join(dir, 'api.ts'), 'utf8').replace(/`[^`]*`/g, '``'),
  },
  {
    // It renames `from` and `type` parameters `$from` and `$type`, and names its base URL after the server's
    // description (test/unit/spec-client-safety.test.ts keeps that short).
    name: 'oazapfts 7.5.0',
    driver: 'oazapfts',
    generate: (dir) => run('oazapfts/dist/cli.js', [spec, path.join(dir, 'api.ts')]),
    types: (dir) => fs.readFileSync(path.join(dir, 'api.ts'), 'utf8'),
  },
];

function zodClient(from: string, dir: string) {
  return run('openapi-zod-client/bin.js', [from, '-o', path.join(dir, 'api.ts')]);
}

const dirOf = (g: Generator) => path.join(out, g.name.split(' ')[0].replace(/[@/]/g, '_'));

/**
 * Every generator's client, made once, then type-checked together in one `tsc --strict` program: a program per
 * client read the ES and DOM libraries six times over. Each client is a folder of modules of its own, so one
 * client's files cannot satisfy another's; tsc names the file of each error, and each test below reads its own.
 */
let made: Promise<{ generated: Map<Generator, { status: number | null; output: string; files: string[] }>; errors: string[] }>;
beforeAll(() => {
  made = (async () => {
    const generated = new Map(generators.map((g) => {
      fs.mkdirSync(dirOf(g), { recursive: true });
      const result = g.generate(dirOf(g));
      return [g, { ...result, files: tsFiles(dirOf(g)) }] as const;
    }));
    const tsc = strictTsc([...generated.values()].flatMap((r) => r.files), ['--noEmit', '--pretty', 'false']);
    const errors = tsc.output.split('\n').map((l) => l.trim()).filter(Boolean);
    if (tsc.status !== 0 && errors.length === 0) errors.push(`tsc exited with ${tsc.status} and said nothing`);
    return { generated, errors };
  })();
  return made;
}, 600_000);

/** tsc options for a program node runs: CommonJS, with node's types alone. */
const NODE_PROGRAM = ['--module', 'CommonJS', '--moduleResolution', 'Node10', '--typeRoots', path.join(root, 'node_modules', '@types'), '--types', 'node'];

/** Compiles `driver` beside `client` (a folder made above) under strict to CommonJS; the program's path. */
function compileDriver(name: string, client: string, driver: string): string {
  const dir = path.join(out, name);
  fs.cpSync(client, path.join(dir, 'client'), { recursive: true });
  fs.copyFileSync(path.join(__dirname, 'sdk-drivers', driver), path.join(dir, 'main.ts'));
  const compiled = strictTsc([path.join(dir, 'main.ts')], ['--outDir', path.join(dir, 'js'), ...NODE_PROGRAM]);
  expect([compiled.status, compiled.output.trim()]).toEqual([0, '']);
  return path.join(dir, 'js', 'main.js');
}

/** Runs a compiled driver against the service (asynchronously: the service answers from this same process). */
function runDriver(main: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.each(generators)('$name', (g) => {
  test('generates a client that compiles under tsc --strict, with no `any` in the types from our schemas', async () => {
    const { generated, errors } = await made;
    const mine = generated.get(g)!;
    expect([mine.status, mine.output.includes('rror') ? mine.output : '']).toEqual([0, '']);
    expect(mine.files.length).toBeGreaterThan(0);
    // Every error but those in another client's files: its own, and any tsc names no client's file for.
    const others = generators.filter((o) => o !== g).map((o) => `${path.relative(out, dirOf(o))}/`);
    expect(errors.filter((e) => !others.some((folder) => e.startsWith(folder)))).toEqual([]);
    expect(anys(g.types(dirOf(g)))).toEqual([]);
  });
});

/** What each program prints: the answers it went by, in order (sdk-drivers/*-lifecycle.ts). */
const LIFECYCLE = [
  'created installing', 'start pending', 'running', 'metrics server_id=true ram_bytes>0=true points=true', 'stop succeeded',
  'stopped', 'delete deleting', 'then 404',
];

/**
 * Each generator's client driven by its program in sdk-drivers/ (create → start → metrics → stop → delete, written
 * as a client author would on that generator's output) against one service running the fake game: one program
 * after another, each as an account of its own. The programs are type-checked with their clients under strict in
 * one tsc program (one read of the libraries, as above), compiled to CommonJS for node.
 */
describe('a program on each client creates, starts, reads metrics, stops and deletes a server', () => {
  const dir = path.join(out, 'lifecycle');
  let errors: string[] = [];
  let t: TestApp | undefined;
  let api: { base: string; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    const { generated } = await made;
    const mains = generators.filter((g) => generated.get(g)!.status === 0).map((g) => {
      fs.cpSync(dirOf(g), path.join(dir, g.driver, 'client'), { recursive: true });
      fs.copyFileSync(path.join(__dirname, 'sdk-drivers', `${g.driver}-lifecycle.ts`), path.join(dir, g.driver, 'main.ts'));
      return path.join(dir, g.driver, 'main.ts');
    });
    const tsc = strictTsc(mains, ['--outDir', path.join(dir, 'js'), '--rootDir', dir, ...NODE_PROGRAM, '--pretty', 'false']);
    errors = tsc.output.split('\n').map((l) => l.trim()).filter(Boolean);
    if (tsc.status !== 0 && errors.length === 0) errors.push(`tsc exited with ${tsc.status} and said nothing`);
    t = await createTestApp({
      boot: true,
      software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'),
      env: { GAME_PORT_RANGE: '29160-29169', METRICS_INTERVAL_S: '1' },
      runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
    });
    api = await t.listen();
  }, 600_000);
  afterAll(async () => {
    await api?.close();
    await t?.finish();
  });

  test.each(generators)('$name', async (g) => {
    // Its program's errors, and any tsc names no program's file for.
    const others = generators.filter((o) => o !== g).map((o) => `${path.relative(out, path.join(dir, o.driver))}/`);
    expect(errors.filter((e) => !others.some((folder) => e.startsWith(folder)))).toEqual([]);
    const env = { BASE: api!.base, TOKEN: t!.token(`${g.driver}@example.com`), VERSION: 'fake-game-1.0' };
    const result = await runDriver(path.join(dir, 'js', g.driver, 'main.js'), env);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(JSON.parse(result.stdout)).toEqual(LIFECYCLE);
  }, 180_000);

  test('every answer the programs got keeps to the contract', () => {
    t!.expectContract();
  });
});

/**
 * A client made from an earlier release keeps working when the service adds a value (issue 42 §3; openapi/v1.yaml
 * "Evolution", x-open-enum). openapi/released/1.4.0.yaml predates open enums, so the earlier release is emulated:
 * today's spec without `member.added` (as if that event type came after it), made into an openapi-zod-client
 * client, whose Zodios checks every answer against its zod schemas. Against the real service, which raises
 * `member.added` when a server is shared, it parses `listEvents` (that event through `OtherEvent`); the same
 * earlier spec with its enums closed again (each x-open-enum's last branch dropped: the form 1.4.0 had) gives a
 * client that refuses the same page, so the open form is what makes the difference, and this test can fail.
 */
test('an openapi-zod-client client from an earlier spec (without member.added) parses listEvents holding one', async () => {
  const earlier = YAML.parse(fs.readFileSync(spec, 'utf8')) as Json;
  const drop = (list: string[]) => list.splice(list.indexOf('member.added'), 1);
  drop(earlier.components.schemas.EventType.enum);
  drop(earlier.components.schemas.MemberEvent.properties.type.enum);
  delete earlier.webhooks['member.added'];
  const closed = structuredClone(earlier);
  const close = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Json)) {
      if (v && typeof v === 'object' && (v as Json)['x-open-enum'] === true) {
        const branches = ((v as Json).anyOf ?? (v as Json).oneOf) as Json[];
        (node as Json)[k] = branches.length === 2 ? branches[0] : { ...(v as Json), anyOf: undefined, 'x-open-enum': undefined, oneOf: branches.slice(0, -1) };
      }
      close((node as Json)[k]);
    }
  };
  close(closed.components.schemas);
  expect(JSON.stringify(closed)).not.toContain('"x-open-enum":true');
  const programs = Object.entries({ open: earlier, closed }).map(([name, document]) => {
    const dir = path.join(out, `earlier-${name}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'v1.json'), JSON.stringify(document));
    fs.mkdirSync(path.join(dir, 'gen'));
    const made = zodClient(path.join(dir, 'v1.json'), path.join(dir, 'gen'));
    expect(made.status).toBe(0);
    return compileDriver(`earlier-${name}-program`, path.join(dir, 'gen'), 'zod-events.ts');
  });

  const t = await createTestApp();
  const api = await t.listen();
  try {
    const token = t.token('owner@example.com');
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${api.base}${p}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect([method, p, res.status]).toEqual([method, p, method === 'POST' ? 201 : 200]);
      return (await res.json()) as Json;
    };
    const plan = (await call('GET', '/v1/plans')).data[0].id as string;
    const version = (await call('GET', '/v1/versions')).data[0].id as string;
    const server = await call('POST', '/v1/servers', { name: 'Shared', plan, version });
    await call('POST', `/v1/servers/${server.id}/members`, { email: 'friend@example.com', permissions: ['console'] });

    const env = { BASE: api.base, TOKEN: token };
    const [open, refused] = await Promise.all(programs.map((main) => runDriver(main, env)));
    expect([open.code, open.stderr, refused.code, refused.stderr]).toEqual([0, '', 0, '']);
    expect(JSON.parse(open.stdout)).toEqual({ parsed: expect.arrayContaining(['server.created', 'member.added']) });
    expect(JSON.parse(refused.stdout)).toEqual({ refused: expect.stringMatching(/invalid|union/i) });
    t.expectContract();
  } finally {
    await api.close();
    await t.finish();
  }
}, 300_000);
