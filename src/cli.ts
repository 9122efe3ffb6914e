// `npx gsh …`, the operator CLI (README "Command line"): routes a command line to its group's module. Help,
// usage errors and exit codes are src/cli-usage.ts's, the same for every command.
import path from 'node:path';
import { loadConfig } from './config';
import { createEngine } from './runtime/host/docker/engine';
import { buildImage } from './runtime/host/docker/image';
import { builtinSoftwareDir } from './runtime/host/select-environment';
import { loadSoftwareCatalog } from './runtime/software/software-catalog';
import { NODE_HELP, NODE_USAGE, runNodeCli } from './cli-nodes';
import { MOVE_HELP, MOVE_USAGE, runServerCli } from './cli-moves';
import { DB_HELP, DB_USAGE, runDbCli } from './cli-db';
import { runConfigCli } from './cli-config';
import { runAccountCli, TOKEN_HELP, TOKEN_USAGE, USER_HELP, USER_USAGE } from './cli-accounts';
import { route, type Group } from './cli-usage';
import { printable } from './printable';

export { UsageError } from './cli-usage';
export { parseDuration } from './cli-accounts';

/** Every command group, in the order the global help lists them; each group's usage lines name its commands. */
const groups: Group[] = [
  { name: 'token', usage: TOKEN_USAGE, help: TOKEN_HELP },
  { name: 'user', usage: USER_USAGE, help: USER_HELP },
  {
    name: 'image',
    usage: '  gsh image build',
    help: `image build builds the game image (RUNTIME=docker) on the engine at DOCKER_HOST from this host's Node, the games'
files and modules and the software folders, with no registry, replacing any image of the same name; the service
also builds it on each node's engine that lacks it.`,
  },
  { name: 'node', usage: NODE_USAGE, help: `${NODE_HELP}\n\n${MOVE_HELP}` },
  { name: 'server', usage: MOVE_USAGE, help: MOVE_HELP },
  { name: 'db', usage: DB_USAGE, help: DB_HELP },
  {
    name: 'config',
    usage: '  gsh config',
    help: `config prints the configuration in effect for this environment, one NAME=value line per setting, "(default)"
after a value the environment does not set; a secret shows only whether it is set. It exits 1 with the message
of an invalid setting, as \`npm start\` would stop with it.`,
  },
];

/** `gsh image build`: builds on the engine at DOCKER_HOST; any failure is exit 1. */
async function imageBuild(env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  try {
    const { dockerHost, dataDir, dockerGameUser } = loadConfig(env);
    // The same image the service builds: Node, the games' files and modules, the software folders (image.ts).
    const operatorDir = path.join(dataDir, 'software');
    const catalog = loadSoftwareCatalog({ operatorDir });
    const content = { imageFiles: catalog.imageFiles(), ...catalog.imageModules(), softwareDirs: [builtinSoftwareDir(), operatorDir], user: dockerGameUser };
    const name = await buildImage(createEngine(dockerHost), content, true);
    out(`Built image ${name} on ${dockerHost}.`);
    return 0;
  } catch (e) {
    err(`gsh: image build failed: ${(e as Error).message}`);
    return 1;
  }
}

/**
 * Runs one CLI command; returns the exit code (a promise of it for the commands that wait: image, node, server, db).
 * Output goes through `out`/`err` so tests can read it.
 */
export function runCli(argv: string[], env: NodeJS.ProcessEnv, rawOut: (s: string) => void, rawErr: (s: string) => void): number | Promise<number> {
  // Every line any command prints goes through printable(): a name stored before the API refused C1 controls, an
  // operator's own input echoed back, or an engine's error text can hold escapes a terminal would act on.
  const out = (s: string) => rawOut(printable(s));
  const err = (s: string) => rawErr(printable(s));
  const routed = route(groups, argv, out, err);
  if ('code' in routed) return routed.code;
  const { command, args } = routed;
  if (command === 'image build') return imageBuild(env, out, err);
  if (command === 'config') return runConfigCli(env, out, err);
  if (args[0] === 'node') return runNodeCli(args.slice(1), env, out, err);
  if (args[0] === 'server') return runServerCli(args.slice(1), env, out, err);
  if (args[0] === 'db') return runDbCli(args.slice(1), env, out, err);
  return runAccountCli(args, env, out, err);
}
