import Ajv from 'ajv';

/**
 * The settings a software definition lets a server's owner change (its `user_settings` key; docs/architecture.md
 * "Settings"). Data, not code: each setting is a JSON Schema fragment plus how its value reaches the game, so the
 * next game engine gets settings by writing JSON. Parsed and checked once, when the catalog loads.
 *
 *   "motd": {
 *     "schema": { "type": "string", "title": "Message of the day", "maxLength": 100, "default": "…",
 *                 "description": "…" },   JSON Schema (draft-07); `title` (optional) is a form's label
 *     "restart": true,               a change reaches a running game only at its next start
 *     "creation_only": false,        (optional) only given when the server is created (a world's seed)
 *     "random_at_create": false,     (optional, a creation_only integer with minimum and maximum) left out at create,
 *                                    the service picks it at random in that range and keeps it, so it is shown
 *     "plan_limit": "player_slots",  (optional) the plan's figure is the maximum and the default
 *     "via": {
 *       "file": "/motd",             (optional) a JSON Pointer into the settings.json written at every launch
 *       "argument": "max_players",   (optional) the command placeholder whose value it gives
 *       "console": "difficulty {value}", (optional) the console command that applies it while the game runs
 *       "values": { "easy": 1 }      (optional) what the game is given for each value (keys are the JSON text)
 *     }
 *   }
 */
export interface SettingDefinition {
  name: string;
  schema: Record<string, unknown>;
  restart: boolean;
  creationOnly: boolean;
  /** Left out at create, picked at random within the schema's bounds (`random_at_create`). */
  randomAtCreate: boolean;
  planLimit: 'player_slots' | null;
  via: { file: string | null; argument: string | null; console: string | null; values: Record<string, unknown> | null };
}

const TYPES = ['string', 'integer', 'number', 'boolean'];

/** One Ajv for checking fragments at load; draft-07, like the spec's validator (docs/conventions.md "The contract"). */
const loadAjv = new Ajv({ strict: true, allErrors: true });

/**
 * Each fragment compiled once per process, by its text: Ajv keeps what it compiled by the schema object, and every
 * catalog load parses new objects, so each load compiled (and kept) every fragment again.
 */
const compiled = new Map<string, ReturnType<typeof loadAjv.compile>>();

function compile(schema: Record<string, unknown>) {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = loadAjv.compile(schema)));
  return validate;
}

/**
 * Parses a definition's `user_settings`; `placeholders` are those its command uses (an `argument` must name one).
 * Throws through `fail` naming the setting and the field at fault.
 */
export function parseSettingDefinitions(raw: unknown, placeholders: string[], fail: (msg: string) => never): SettingDefinition[] {
  if (raw === undefined) return [];
  if (!isObject(raw)) return fail('"user_settings" must be an object');
  return Object.entries(raw).map(([name, entry]) => {
    const at = (msg: string) => fail(`"user_settings.${name}": ${msg}`);
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) at('names are lowercase letters, digits and underscores');
    if (!isObject(entry)) return at('must be an object');
    const schema = entry.schema;
    if (!isObject(schema) || !TYPES.includes(schema.type as string)) return at(`"schema.type" must be one of ${TYPES.join(', ')}`);
    if (typeof schema.description !== 'string') at('"schema.description" is required');
    if (schema.title !== undefined && (typeof schema.title !== 'string' || schema.title.length > 100)) at('"schema.title" must be text of at most 100 characters');
    try {
      const validate = compile(schema);
      if (schema.default !== undefined && !validate(schema.default)) at('"schema.default" does not match the schema');
    } catch (err) {
      at(`"schema" is not a valid JSON Schema: ${(err as Error).message}`);
    }
    if (typeof entry.restart !== 'boolean') at('"restart" must be true or false');
    const via = isObject(entry.via) ? entry.via : at('"via" must be an object');
    const opt = (key: string) => (via[key] === undefined ? null : typeof via[key] === 'string' && via[key] !== '' ? via[key] : at(`"via.${key}" must be a non-empty string`));
    const file = opt('file');
    const argument = opt('argument');
    const console = opt('console');
    if (!file && !argument && !console) at('"via" needs "file", "argument" or "console"');
    if (file && !/^(\/[^/~]+)+$/.test(file)) at('"via.file" must be a JSON Pointer such as "/motd"');
    if (argument && !placeholders.includes(argument)) at(`"via.argument" must be a placeholder of "command"`);
    if (console && !console.includes('{value}')) at('"via.console" must contain {value}');
    if (entry.restart === false && !console) at('a setting applied without a restart needs "via.console"');
    if (via.values !== undefined && !isObject(via.values)) at('"via.values" must be an object');
    const randomAtCreate = entry.random_at_create === true;
    if (randomAtCreate && (entry.creation_only !== true || schema.type !== 'integer' || typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number')) {
      at('"random_at_create" needs "creation_only" and an integer schema with "minimum" and "maximum"');
    }
    const planLimit = entry.plan_limit ?? null;
    if (planLimit !== null && (planLimit !== 'player_slots' || schema.type !== 'integer')) at('"plan_limit" may only be "player_slots", on an integer');
    return {
      name,
      schema,
      restart: entry.restart as boolean,
      creationOnly: entry.creation_only === true,
      randomAtCreate,
      planLimit: planLimit as 'player_slots' | null,
      via: { file, argument, console, values: (via.values as Record<string, unknown> | undefined) ?? null },
    };
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
