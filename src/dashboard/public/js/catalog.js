// The catalog (GET /v1/plans, /v1/versions, /v1/versions/{id}) by name: plans and game versions as a customer
// knows them, never by their ids (issue 29). Read once per page view; a version's detail once per version.
import { api } from './api.js';
import { fmtCores, fmtMiB, plural } from './format.js';

let loaded = null;
const details = new Map();

/** { plans, versions, plan(id), version(id) }: version(id) also carries `name`, its game and game version. */
export async function catalog() {
  loaded ??= Promise.all([api('GET', '/v1/plans'), api('GET', '/v1/versions')]).then(([plans, versions]) => ({
    plans: plans.data,
    versions: versions.data,
    plan: (id) => plans.data.find((p) => p.id === id) ?? null,
    version: (id) => versions.data.find((v) => v.id === id) ?? null,
  }));
  try {
    return await loaded;
  } catch (e) {
    loaded = null; // a failed read is tried again by the next page
    throw e;
  }
}

/** A version's settings schema and player lists (VersionDetail), cached. */
export function versionDetail(id) {
  if (!details.has(id)) details.set(id, api('GET', `/v1/versions/${id}`).catch((e) => (details.delete(id), Promise.reject(e))));
  return details.get(id);
}

/** "Minecraft Java Edition 1.20" for a server or a version id (the id itself when the catalog lost it). */
export function versionName(cat, id) {
  const v = cat.version(id);
  return v ? `${v.game} ${v.game_version}` : id;
}

/** What a plan gives: "512 MiB RAM · 0.5 CPU cores · 5 players · 2 GiB disk · 2 backups". */
export function planFigures(plan) {
  return [
    `${fmtMiB(plan.memory_mb)} RAM`, fmtCores(plan.cpu_percent), plural(plan.player_slots, 'player'),
    `${fmtMiB(plan.disk_mb)} disk`, plural(plan.backups, 'backup'),
  ].join(' · ');
}

/** "Micro" for a plan id (the id itself when the catalog lost it). */
export function planName(cat, id) {
  return cat.plan(id)?.name ?? id;
}

/**
 * The chart titles of a game: its tick rate has a name and a full speed of its own (README "Game servers": Luanti's
 * dedicated server steps about 11 times a second, Minecraft ticks 20 times).
 */
export function tickTitle(game) {
  if (game === 'Minecraft Java Edition') return { title: 'TPS (ticks per second; 20 is full speed)', full: 20 };
  if (game === 'Luanti') return { title: 'Server steps per second (about 11 is full speed)', full: 11 };
  return { title: 'Ticks per second', full: 1 };
}
