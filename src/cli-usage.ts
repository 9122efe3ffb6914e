// The operator CLI's conventions, in one place for every command (README "Command line"): `gsh help [command]`
// and `--help` print help on stdout and exit 0; a usage error prints one line saying what is wrong and then the
// command's usage on stderr, exit 2; a command that is refused or fails says why on stderr, exit 1; `--json` on a
// list prints one JSON document on stdout. The commands' own usage lines are the source of truth for which commands
// and flags exist, so a help text cannot promise a flag the command refuses.

export type Print = (s: string) => void;

/** The command line itself is wrong (exit 2); any other error a command throws is a failure (exit 1). */
export class UsageError extends Error {}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** One group of commands (`gsh node …`): its usage lines (`  gsh node add …`, continuations indented deeper) and help. */
export interface Group {
  name: string;
  usage: string;
  help: string;
}

/** One command, read from its usage lines: the words naming it, and every flag it takes. */
interface Entry {
  path: string[];
  text: string;
  flags: Set<string>;
  /** The usage names nothing after the command: it takes no arguments at all. */
  bare: boolean;
}

const WORD = /^[a-z][a-z0-9-]*$/;

/** The commands of a usage text; a line starting with `gsh` starts one, the lines indented under it continue it. */
function entries(usage: string): Entry[] {
  const found: Entry[] = [];
  for (const line of usage.split('\n')) {
    if (/^\s*gsh\s/.test(line)) {
      const words = line.trim().split(/\s+/).slice(1);
      const named = words.findIndex((w) => !WORD.test(w));
      const path = named < 0 ? words : words.slice(0, named);
      found.push({ path, text: line, flags: new Set(), bare: words.length === path.length });
    } else if (line.trim() && found.length > 0) {
      const last = found[found.length - 1];
      last.text += `\n${line}`;
      last.bare = false;
    }
  }
  for (const e of found) for (const m of e.text.matchAll(/--[a-z][a-z0-9-]*/g)) e.flags.add(m[0]);
  return found;
}

/** The entry whose words `args` starts with, the longest if several do. */
function match(all: Entry[], args: string[]): Entry | undefined {
  const fits = all.filter((e) => e.path.every((w, i) => args[i] === w));
  return fits.sort((a, b) => b.path.length - a.path.length)[0];
}

/** `--memory-mb -5` as `--memory-mb=-5`, so a negative number reaches the command's own check, not parseArgs' refusal. */
function joinNegatives(argv: string[]): string[] {
  const joined: string[] = [];
  for (const a of argv) {
    const last = joined.at(-1);
    if (/^-\d/.test(a) && last?.startsWith('--') && !last.includes('=')) joined[joined.length - 1] = `${last}=${a}`;
    else joined.push(a);
  }
  return joined;
}

/** Node's parseArgs errors (ERR_PARSE_ARGS_*) in our words, on one line. */
function describe(e: Error): string {
  const m = e.message;
  const option = /^Option '(-[^' ]+)/.exec(m)?.[1];
  if (option && m.includes('ambiguous')) return `${option} needs a value; for a value that starts with a dash, write ${option}=-….`;
  if (option && m.includes('argument missing')) return `${option} needs a value.`;
  if (option && m.includes('does not take an argument')) return `${option} takes no value.`;
  const unknown = /^Unknown option '([^']+)'/.exec(m)?.[1];
  if (unknown) return `There is no option ${unknown}.`;
  const positional = /^Unexpected argument '([^']*)'/.exec(m)?.[1];
  if (positional !== undefined) return `Unexpected argument "${positional}".`;
  return m.split('\n')[0];
}

export function isUsageError(e: unknown): boolean {
  return e instanceof UsageError || ((e as { code?: unknown }).code?.toString() ?? '').startsWith('ERR_PARSE_ARGS');
}

function usageOf(found: Entry[], topic: string): string {
  return `Usage:\n${found.map((e) => e.text).join('\n')}\nRun \`gsh help ${topic}\` for more.`;
}

/**
 * Prints what a command threw and answers its exit code: for a usage error (UsageError, or parseArgs') one line
 * and the usage of the command `args` names (of its whole group if none), exit 2; else `gsh: <message>`, exit 1.
 */
export function failure(e: unknown, err: Print, usage: string, args: string[]): number {
  if (!isUsageError(e)) {
    err(`gsh: ${(e as Error).message}`);
    return EXIT_FAILED;
  }
  const all = entries(usage);
  const entry = match(all, args);
  err(`gsh: ${e instanceof UsageError ? e.message : describe(e as Error)}`);
  err(usageOf(entry ? [entry] : all, (entry?.path ?? all.at(0)?.path.slice(0, 1) ?? []).join(' ')));
  return EXIT_USAGE;
}

/** The global help: every command's usage, then the conventions; the details are in `gsh help <command>`. */
function globalHelp(groups: Group[]): string {
  return `Usage:
${groups.map((g) => g.usage).join('\n')}
  gsh help [<command>]

Works on the service's DATA_DIR (default ./data), also while the service runs.
\`gsh help <command>\` (or \`gsh <command> --help\`) says what a command does and what its flags take.
Exit status: 0 done, 1 refused or failed (the reason on stderr), 2 a usage error (what is wrong, then the
command's usage, on stderr). Every list command takes --json: one JSON document on stdout, an array of objects
whose fields are named in the command's help.`;
}

/** The usage of `gsh` itself: the commands' names; their own usage lines are in `gsh help`. */
function commandList(groups: Group[]): string {
  return `  gsh <command> …, where <command> is one of: ${groups.map((g) => g.name).join(', ')}, help`;
}

/**
 * The parts of a group's help about one command. A help text is read as paragraphs, each starting on a line that
 * starts with a command's name ("node add registers…") and running to the next; those that name the command are
 * its help. A command none names gets the whole text.
 */
function helpAbout(help: string, command: string, names: string[]): string {
  const parts: string[] = [];
  for (const line of help.split('\n')) {
    if (parts.length === 0 || names.some((n) => line.startsWith(`${n} `))) parts.push(line);
    else parts[parts.length - 1] += `\n${line}`;
  }
  const own = parts.filter((p) => ` ${p.replace(/\s+/g, ' ')} `.includes(` ${command} `));
  return own.length > 0 ? own.map((p) => p.trim()).join('\n') : help;
}

/** A command's help: its usage (one command's, or its group's), then what the group's help says about it. */
function commandHelp(groups: Group[], group: Group, entry: Entry | undefined): string {
  if (!entry) return `Usage:\n${group.usage}\n\n${group.help}`;
  const names = groups.flatMap((g) => entries(g.usage).map((e) => e.path.join(' ')));
  return `Usage:\n${entry.text}\n\n${helpAbout(group.help, entry.path.join(' '), names)}`;
}

/** Where `gsh <argv…>` goes: a command's path (e.g. "node add") and its arguments, or the exit code once answered here. */
export type Routed = { code: number } | { command: string; args: string[] };

function usageError(err: Print, message: string, usage: string, topic: string): Routed {
  err(`gsh: ${message}`);
  err(`Usage:\n${usage}\nRun \`gsh help${topic ? ` ${topic}` : ''}\` for more.`);
  return { code: EXIT_USAGE };
}

/** `gsh help [topic…]`, `gsh --help`: the help of a group or command, or the global help. */
function help(groups: Group[], topic: string[], out: Print, err: Print): Routed {
  if (topic.length === 0) {
    out(globalHelp(groups));
    return { code: EXIT_OK };
  }
  const group = groups.find((g) => g.name === topic[0]);
  if (!group) return usageError(err, `There is no command "${topic.join(' ')}".`, commandList(groups), '');
  out(commandHelp(groups, group, match(entries(group.usage), topic)));
  return { code: EXIT_OK };
}

/** `gsh node certs` or `gsh node bogus`: which words name no command, and the usage of those that start alike. */
function unknownCommand(group: Group, args: string[], err: Print): Routed {
  const all = entries(group.usage);
  const startsWith = (e: Entry, n: number) => e.path.length > n && args.slice(0, n).every((w, i) => e.path[i] === w);
  let known = 1;
  while (all.some((e) => startsWith(e, known + 1))) known++;
  const prefix = args.slice(0, known).join(' ');
  const next = args.at(known);
  const message = next === undefined || next.startsWith('-') ? `Name a ${prefix} command.` : `There is no ${prefix} command "${next}".`;
  return usageError(err, message, all.filter((e) => startsWith(e, known)).map((e) => e.text).join('\n'), prefix);
}

/**
 * Answers help and the usage errors every command shares (no command, an unknown one, a flag it does not take, an
 * argument to one that takes none); otherwise says which command runs, with its arguments.
 */
export function route(groups: Group[], argv: string[], out: Print, err: Print): Routed {
  const args = joinNegatives(argv);
  const end = args.indexOf('--');
  const options = end < 0 ? args : args.slice(0, end);
  const all = commandList(groups);
  if (args.length === 0) return usageError(err, 'Name a command.', all, '');
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') return help(groups, args.slice(1).filter((a) => !a.startsWith('-')), out, err);
  const group = groups.find((g) => g.name === args[0]);
  if (!group) return usageError(err, `There is no command "${args[0]}".`, all, '');
  const entry = match(entries(group.usage), args);
  if (options.includes('--help') || options.includes('-h')) {
    out(commandHelp(groups, group, entry));
    return { code: EXIT_OK };
  }
  if (!entry) return unknownCommand(group, args, err);
  const command = entry.path.join(' ');
  const flag = options.map((a) => /^--[^=]*/.exec(a)?.[0]).find((f) => f !== undefined && !entry.flags.has(f));
  if (flag) return usageError(err, `gsh ${command} takes no ${flag}.`, entry.text, command);
  if (entry.bare && args.length > entry.path.length) return usageError(err, `gsh ${command} takes no arguments; got "${args[entry.path.length]}".`, entry.text, command);
  return { command, args };
}

/** `value` as one line of JSON that prints as itself on any terminal: every character past ASCII is a \u escape. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
