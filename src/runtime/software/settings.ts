import Ajv, { type ErrorObject } from 'ajv';
import { AppError, schemaRule, type FieldError } from '../../errors';
import type { Plan } from '../../catalog/plans';
import { isCommandLine } from './console-text';
import type { SettingDefinition } from './setting-definitions';
import type { SoftwareDefinition } from './software-catalog';

/** A server's settings by name, as the API shows them (JSON values). */
export type SettingValues = Record<string, unknown>;

/** Compiled per (software, plan): the plan bounds `plan_limit` settings. Validation is draft-07 like the spec's. */
const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

/** One setting's JSON Schema fragment for this plan: a `plan_limit` setting is at most the plan's figure, its default. */
export function settingSchema(s: SettingDefinition, plan: Plan | null): Record<string, unknown> {
  if (s.planLimit !== 'player_slots' || !plan) return s.schema;
  const max = typeof s.schema.maximum === 'number' ? Math.min(s.schema.maximum, plan.player_slots) : plan.player_slots;
  return { ...s.schema, maximum: max, default: max };
}

/** The JSON Schema of a whole settings object (GET /v1/versions/{version_id}; the dashboard builds its form from it). */
export function settingsObjectSchema(def: SoftwareDefinition, plan: Plan | null): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(def.userSettings.map((s) => [s.name, settingSchema(s, plan)])),
  };
}

/**
 * Checks a change (or the settings given at create) against the software's schema for the plan. Throws
 * validation_failed listing every problem with a JSON Pointer under `pointerBase` (docs/conventions.md "Errors");
 * `creating` allows the creation-only settings. null resets a setting to its default.
 */
export function checkSettings(def: SoftwareDefinition, plan: Plan, values: SettingValues, pointerBase: string, creating: boolean): void {
  const errors: FieldError[] = [];
  const given: SettingValues = {};
  for (const [name, value] of Object.entries(values)) {
    const s = def.userSettings.find((d) => d.name === name);
    const pointer = `${pointerBase}/${escapePointer(name)}`;
    if (!s) errors.push({ pointer, detail: `${def.id} has no setting "${name.slice(0, 60)}"` });
    else if (s.creationOnly && !creating) errors.push({ pointer, detail: 'can be set only when the server is created' });
    else if (value !== null) given[name] = value;
  }
  const key = `${def.id}\u0000${plan.id}`;
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(settingsObjectSchema(def, plan))));
  for (const e of validate(given) ? [] : validate.errors ?? []) {
    const error = fieldError(e, pointerBase);
    if (!errors.some((known) => known.pointer === error.pointer)) errors.push(error); // one per setting: type or enum
  }
  if (errors.length > 0) {
    throw new AppError('validation_failed', `The settings have ${errors.length} problem(s); see errors.`, errors.slice(0, 100));
  }
}

function fieldError(e: ErrorObject, base: string): FieldError {
  return { pointer: `${base}${e.instancePath}`.slice(0, 300), detail: (e.message ?? 'is not valid').slice(0, 500), ...schemaRule(e) };
}

function escapePointer(name: string): string {
  return name.slice(0, 100).replace(/~/g, '~0').replace(/\//g, '~1'); // RFC 6901 §3
}

/** Every setting's value: the chosen one, else its default (absent when it has none, like a seed the game picks). */
export function effectiveSettings(def: SoftwareDefinition, plan: Plan, chosen: SettingValues): SettingValues {
  const out: SettingValues = {};
  for (const s of def.userSettings) {
    const schema = settingSchema(s, plan);
    let value = chosen[s.name] ?? schema.default;
    // A smaller plan bounds a value chosen under a larger one.
    if (s.planLimit && typeof value === 'number') value = Math.min(value, schema.maximum as number);
    if (value !== undefined) out[s.name] = value;
  }
  return out;
}

/** What the game is given for a value: the definition's `values` entry for it, else the value itself. */
export function gameValue(s: SettingDefinition, value: unknown): unknown {
  const mapped = s.via.values?.[typeof value === 'string' ? value : JSON.stringify(value)];
  return mapped === undefined ? value : mapped;
}

/** The settings.json of a launch: the definition's fixed `settings`, each `file` setting at its JSON Pointer. */
export function renderSettingsFile(def: SoftwareDefinition, values: SettingValues): string {
  const file = structuredClone<Record<string, unknown>>(def.settings ?? {});
  for (const s of def.userSettings) {
    if (!s.via.file || values[s.name] === undefined) continue;
    const parts = s.via.file.slice(1).split('/');
    let at = file;
    for (const part of parts.slice(0, -1)) {
      if (typeof at[part] !== 'object' || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[parts[parts.length - 1]] = gameValue(s, values[s.name]);
  }
  return JSON.stringify(file, null, 2) + '\n';
}

/** The command placeholders the settings give (`via.argument`), as text. */
export function settingArguments(def: SoftwareDefinition, values: SettingValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of def.userSettings) {
    if (s.via.argument && values[s.name] !== undefined) out[s.via.argument] = String(gameValue(s, values[s.name]));
  }
  return out;
}

/**
 * The console command that applies a value while the game runs; null when the setting needs a restart. A value
 * that would make it more than one line of text (a second command) is refused, whatever the definition's schema.
 */
export function consoleCommand(s: SettingDefinition, value: unknown): string | null {
  if (s.restart || !s.via.console) return null;
  const command = s.via.console.replace('{value}', String(gameValue(s, value)));
  if (!isCommandLine(command)) {
    const detail = 'would not be one line of text on the console';
    throw new AppError('validation_failed', `The value of ${s.name} ${detail}.`, [{ pointer: `/body/${s.name}`, detail }]);
  }
  return command;
}
