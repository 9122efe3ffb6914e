// Schedules for people who do not write cron (issue 38 §5): the "When" editor's modes written as a five-field cron
// (minute hour day-of-month month day-of-week, the service's own reading: src/runtime/services/cron.ts), a cron read
// back into the simplest mode that says exactly the same times, and what is wrong with one, in sentences. Pure
// functions, no DOM: schedule-when.js draws the editor.

/** The days of the week as the editor lists them, Monday first, with their cron numbers (0 and 7 are Sunday). */
export const DAYS = [[1, 'Monday'], [2, 'Tuesday'], [3, 'Wednesday'], [4, 'Thursday'], [5, 'Friday'], [6, 'Saturday'], [0, 'Sunday']];
/** The "every N hours" steps: divisors of 24, so the gap across midnight is N hours too (every 5 hours is not). */
export const EVERY_HOURS = [1, 2, 3, 4, 6, 8, 12];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** The characters ScheduleCron's pattern allows (openapi/v1.yaml); the page says so in words, never the pattern. */
const CRON_CHARS = /[^0-9A-Za-z*/,\-?# ]/;

/** Days as a cron's day-of-week field: numbers in order, three or more in a row as a range (`1-5`). */
function dayList(days) {
  const sorted = [...new Set(days.map((d) => d % 7))].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    if (j - i >= 2) out.push(`${sorted[i]}-${sorted[j]}`);
    else for (let k = i; k <= j; k++) out.push(String(sorted[k]));
    i = j + 1;
  }
  return out.join(',');
}

/**
 * The cron a mode names: `daily` (every day at `hour`:`minute`), `weekly` (on `days` at that time), `hourly` (every
 * `every` hours from midnight, at `minute` past the hour).
 */
export function cronOf(w) {
  if (w.mode === 'daily') return `${w.minute} ${w.hour} * * *`;
  if (w.mode === 'weekly') return `${w.minute} ${w.hour} * * ${dayList(w.days)}`;
  if (w.mode === 'hourly') return `${w.minute} ${w.every === 1 ? '*' : `*/${w.every}`} * * *`;
  throw new Error(`no cron for the mode ${w.mode}`);
}

/** A whole number 0–max written plainly (`4`, `04`), or null. */
function single(text, max) {
  if (!/^\d{1,2}$/.test(text)) return null;
  const n = Number(text);
  return n <= max ? n : null;
}

/** The weekdays a day-of-week field of numbers, names and ranges names (0–6), or null for anything else (L, #, /). */
function daysOf(text) {
  const day = (t) => {
    const named = DAY_NAMES.indexOf(t.toLowerCase());
    if (named >= 0) return named;
    const n = single(t, 7);
    return n === null ? null : n;
  };
  const set = new Set();
  for (const item of text.split(',')) {
    const [a, b, extra] = item.split('-');
    if (extra !== undefined) return null;
    const from = day(a);
    const to = b === undefined ? from : day(b);
    if (from === null || to === null || from > to) return null;
    for (let d = from; d <= to; d++) set.add(d % 7);
  }
  return [...set].sort((x, y) => x - y);
}

const star = (t) => t === '*' || t === '?';

/**
 * The simplest mode that names exactly the times `cron` does ({ mode, hour, minute, days, every }), or
 * `{ mode: 'advanced' }`. The day of month and the month must be `*` (with `*` there, cron.ts matches a day by its
 * weekday alone).
 */
export function readCron(cron) {
  const advanced = { mode: 'advanced' };
  const parts = String(cron).trim().split(/\s+/);
  if (parts.length !== 5) return advanced;
  const [mi, ho, dom, month, dow] = parts;
  const minute = single(mi, 59);
  if (minute === null || !star(dom) || month !== '*') return advanced;
  const hour = single(ho, 23);
  if (hour !== null) {
    if (star(dow)) return { mode: 'daily', hour, minute };
    const days = daysOf(dow);
    if (!days || days.length === 0) return advanced;
    return days.length === 7 ? { mode: 'daily', hour, minute } : { mode: 'weekly', hour, minute, days };
  }
  if (!star(dow)) return advanced;
  if (ho === '*') return { mode: 'hourly', every: 1, minute };
  const step = /^(?:\*|0|0-23)\/(\d{1,2})$/.exec(ho);
  const every = step ? Number(step[1]) : 0;
  return EVERY_HOURS.includes(every) ? { mode: 'hourly', every, minute } : advanced;
}

/** What is wrong with a typed cron before the service is asked (its shape), as a sentence; null when nothing. */
export function cronCheck(text) {
  const cron = text.trim();
  if (!cron) return 'Write a cron expression of five fields: minute, hour, day of month, month, day of week (such as 30 4 * * 1-5).';
  if (cron.length > 100) return 'A cron expression has at most 100 characters.';
  const bad = CRON_CHARS.exec(cron);
  if (bad) return `A cron expression cannot have ${bad[0] === '\t' ? 'a tab' : `“${bad[0]}”`}: use numbers, names such as mon or jan, spaces and * / , - ? #.`;
  const n = cron.split(/\s+/).length;
  if (n !== 5) return `A cron expression has five fields (minute, hour, day of month, month, day of week) separated by spaces; this one has ${n}.`;
  return null;
}

/** What the hour:minute of an <input type="time"> says is wrong with it, or null; `badInput` for a part-typed one. */
export function timeCheck(value, badInput) {
  if (badInput) return 'The time is not complete: give the hour and the minutes, such as 04:30.';
  if (!/^\d{2}:\d{2}/.test(value)) return 'Choose the time of day it runs, such as 04:30.';
  return null;
}

const LABELS = {
  name: 'The name', cron: 'The cron expression', time_zone: 'The time zone', only_when: 'The condition', tasks: 'The tasks',
  command: 'The line to send', delay_seconds: 'The wait', action: 'The action',
};
/** Our own sentence where the service's detail would show a schema's pattern (issue 38 §2: never a regular expression). */
const PATTERN_WORDS = {
  name: 'The name cannot be only spaces or have control characters.',
  cron: 'A cron expression has only numbers, names such as mon or jan, spaces and * / , - ? #.',
  time_zone: 'Choose a time zone from the list.',
  command: 'The line to send cannot be only spaces or have control characters.',
};

/**
 * A field problem of the service (RFC 9457 `errors[]`: `pointer`, `detail`; docs/conventions.md "Errors") as a sentence
 * about the customer's input: "The cron expression is not a five-field cron expression: the minute field has 61, …".
 */
export function problemWords({ pointer, detail }) {
  const parts = pointer.replace(/^\/(body|query)\//, '').split('/');
  const key = parts[0] === 'tasks' && parts.length > 2 ? parts.at(-1) : parts[0];
  const label = LABELS[key] ?? 'This';
  if (key === 'name' && /is required|fewer than 1 /.test(detail)) return 'Give the schedule a name.';
  const cronText = /^is not a five-field cron expression: (.*)$/.exec(detail);
  if (key === 'cron' && cronText) return `The service cannot read this cron expression: ${cronText[1].replace(/\.$/, '')}.`;
  if (/pattern/.test(detail)) return PATTERN_WORDS[key] ?? `${label} has characters it cannot have.`;
  const more = /more than (\d+) (characters|items)/.exec(detail);
  if (more) return `${label} may have at most ${more[1]} ${more[2]}.`;
  const bound = /^must be ([<>])= (\d+)$/.exec(detail);
  if (bound) return `${label} may be at ${bound[1] === '<' ? 'most' : 'least'} ${bound[2]}.`;
  const text = `${label} ${detail}`.trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

const two = (n) => String(n).padStart(2, '0');

/** A cron in words when one of the modes says it ("Every day at 04:30", "Mon, Wed, Fri at 04:30"), else null. */
export function whenText(cron) {
  const w = readCron(cron);
  const at = `${two(w.hour)}:${two(w.minute)}`;
  if (w.mode === 'daily') return `Every day at ${at}`;
  if (w.mode === 'weekly') {
    const names = DAYS.filter(([n]) => w.days.includes(n)).map(([, name]) => name.slice(0, 3));
    return `${names.join(', ')} at ${at}`;
  }
  if (w.mode === 'hourly') return w.every === 1 ? `Every hour at ${two(w.minute)} past` : `Every ${w.every} hours from 00:${two(w.minute)}`;
  return null;
}
