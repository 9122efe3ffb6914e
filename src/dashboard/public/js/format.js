// How the dashboard writes times and sizes, in one place so every page says them the same way (issue 29): times on
// a 24-hour clock in the browser's time zone, always naming the zone; sizes in B, KiB, MiB or GiB, whichever reads
// best. The API sends RFC 3339 UTC times and bytes (docs/conventions.md "IDs and timestamps").
import { h } from './dom.js';

const FULL = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
});
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
const AXIS = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const AXIS_DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const ZONE = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' });

/** The browser's time zone as the times here name it ("UTC", "GMT+2", "CET"). */
export function zoneName(ms = Date.now()) {
  return ZONE.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'local time';
}

/** A date and time with its zone: "May 12, 2026, 14:03:07 GMT+2". */
export function fmtTime(value) {
  if (value === null || value === undefined) return 'never';
  return FULL.format(typeof value === 'number' ? value : Date.parse(value));
}

/** A time of day with its zone, for what happened today (console lines, samples): "14:03:07 GMT+2". */
export function fmtClock(value) {
  return CLOCK.format(typeof value === 'number' ? value : Date.parse(value));
}

/** A chart axis label: the hour and minute, with the day when the window spans more than one. */
export function fmtAxis(ms, spanMs) {
  return (spanMs > 86_400_000 ? AXIS_DAY : AXIS).format(ms);
}

/** A <time> element: machine-readable `datetime`, the text in the one format (full, or `clock` for today's). */
export function timeEl(iso, clock = false) {
  if (!iso) return h('span', {}, 'never');
  return h('time', { datetime: iso, title: fmtTime(iso) }, clock ? fmtClock(iso) : fmtTime(iso));
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Bytes in the unit that reads best (IEC prefixes): 512 B, 18.5 KiB, 312.4 MiB, 1.25 GiB. */
export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  let i = 0;
  while (i < UNITS.length - 1 && Math.abs(n) >= 1024 ** (i + 1)) i++;
  if (i === 0) return `${Math.round(n)} B`;
  const v = n / 1024 ** i;
  const text = v.toFixed(i >= 3 ? 2 : 1).replace(/\.?0+$/, ''); // 1.50 GiB reads 1.5 GiB, 2.0 MiB 2 MiB
  return `${text} ${UNITS[i]}`;
}

/** Mebibytes (the plans' figures) the same way: 512 MiB, 2 GiB. */
export function fmtMiB(mb) {
  return fmtBytes(mb * 1024 * 1024);
}

export function fmtNumber(n, digits = 1) {
  return n === null || n === undefined ? '–' : Number(n).toFixed(digits);
}

/** "1 player", "3 players". */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** CPU percent of one core as people say it: "half a core", "2 cores". */
export function fmtCores(percent) {
  const cores = percent / 100;
  return cores === 1 ? '1 CPU core' : `${Number.isInteger(cores) ? cores : cores.toFixed(2).replace(/0+$/, '')} CPU cores`;
}

/** The input value of <input type="datetime-local"> for a time (its local wall clock, to the minute). */
export function localInputValue(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/**
 * Who did it (an event's or a console line's `actor`), in words. A token id is shown only to its own account, so
 * one that carries it was the reader; `names` maps other accounts' ids to what to call them (a server's owner
 * knows its members' emails).
 */
export function actorText(actor, names = new Map()) {
  if (!actor) return '';
  if (actor.type === 'user') return actor.token_id ? 'you' : (names.get(actor.user_id) ?? 'another account');
  if (actor.cause === 'schedule') return names.get(actor.schedule_id) ?? 'a schedule';
  return `the service (${actor.cause.replace(/_/g, ' ')})`;
}
