/**
 * The player lists a software definition supports (its `player_lists` key; docs/architecture.md "Player lists"):
 *
 *   "player_lists": {
 *     "file": "players.json",        written into the server folder before every launch, for the game to read
 *     "lists": {
 *       "whitelist": { "add": "…{name}", "remove": "…{name}", "on": "…", "off": "…" },   on/off: the switch
 *       "operators": { "add": "op {name}", "remove": "deop {name}" },
 *       "bans":      { "add": "ban {name}", "remove": "pardon {name}" }
 *     }
 *   }
 *
 * Each command is sent through the console while the game runs; the file carries the lists to the next start.
 */
export const LIST_NAMES = ['whitelist', 'operators', 'bans'] as const;
export type ListName = (typeof LIST_NAMES)[number];

export interface ListCommands {
  add: string;
  remove: string;
  /** The whitelist's switch; null for lists without one. */
  on: string | null;
  off: string | null;
}

export interface PlayerListDefinitions {
  file: string;
  lists: Partial<Record<ListName, ListCommands>>;
}

/** Parses a definition's `player_lists`; null when it has none. Throws through `fail` naming the field at fault. */
export function parsePlayerLists(raw: unknown, fail: (msg: string) => never): PlayerListDefinitions | null {
  if (raw === undefined) return null;
  const obj = (v: unknown, what: string) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(`${what} must be an object`));
  const top = obj(raw, '"player_lists"');
  if (typeof top.file !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/i.test(top.file)) fail('"player_lists.file" must be a plain file name');
  const lists: Partial<Record<ListName, ListCommands>> = {};
  for (const [name, entry] of Object.entries(obj(top.lists, '"player_lists.lists"'))) {
    if (!(LIST_NAMES as readonly string[]).includes(name)) fail(`"player_lists.lists.${name}": lists are ${LIST_NAMES.join(', ')}`);
    const e = obj(entry, `"player_lists.lists.${name}"`);
    const text = (key: string, needsName: boolean): string => {
      const v = e[key];
      if (typeof v !== 'string' || v === '' || v.includes('{name}') !== needsName) {
        return fail(`"player_lists.lists.${name}.${key}" must be a console command${needsName ? ' with {name}' : ' without {name}'}`);
      }
      return v;
    };
    const optional = name !== 'whitelist';
    const on = optional && e.on === undefined ? null : text('on', false);
    const off = optional && e.off === undefined ? null : text('off', false);
    lists[name as ListName] = { add: text('add', true), remove: text('remove', true), on, off };
  }
  return { file: top.file, lists };
}
