// A schedule's "When" (issue 38 §5): every day at a time, on chosen weekdays at a time, every N hours, or a cron
// written by hand; the cron the choices make is always shown, and editable. The time zone is picked from the
// browser's list of IANA zones, its own preselected. The next runs are the service's own answer
// (listScheduleTimes), shown in the chosen zone and the reader's, asked for once the customer pauses: no request
// per keystroke, and none twice for the same cron and zone (docs/dashboard-budget.md).
import { api } from './api.js';
import { h, fill, field } from './dom.js';
import { timeEl } from './format.js';
import { DAYS, EVERY_HOURS, cronOf, readCron, cronCheck, timeCheck, problemWords } from './cron-words.js';

const MODES = [
  ['daily', 'Every day at a set time'],
  ['weekly', 'On chosen days of the week'],
  ['hourly', 'Every few hours'],
  ['advanced', 'Advanced: write the cron'],
];
const PREVIEW_MS = 700; // after the last change
const COUNT = 5;

/** The browser's own time zone (an IANA name), as schedules and the preview use it. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const zoneText = (zone) => zone.replace(/_/g, ' ');

/** A select of the IANA zones the browser knows (ECMA-402 Intl.supportedValuesOf), by region, with `chosen` selected. */
function zoneSelect(id, chosen) {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const zones = [...new Set([...known, chosen, browserZone()])].filter((z) => z !== 'UTC').sort();
  const groups = new Map();
  for (const z of zones) {
    const region = z.includes('/') ? z.slice(0, z.indexOf('/')) : 'Other';
    if (!groups.has(region)) groups.set(region, []);
    groups.get(region).push(z);
  }
  const option = (z) => h('option', { value: z, selected: z === chosen }, zoneText(z));
  return h('select', { id, name: 'time_zone' }, option('UTC'),
    [...groups].map(([region, list]) => h('optgroup', { label: region }, list.map(option))));
}

/** Puts `text` at the control's field (dom.js field()'s error line), or clears it with null. */
function say(control, text) {
  const out = document.getElementById(`${control.id}-error`);
  if (!out) return;
  out.textContent = text ?? '';
  out.hidden = !text;
  if (text) control.setAttribute('aria-invalid', 'true');
  else control.removeAttribute('aria-invalid');
}

/**
 * The "When" part of a schedule's form, showing `initial` ({ cron, time_zone }: an existing schedule's, read back into
 * the simplest mode that says it exactly) or every day at 04:00 in the browser's zone. `read()` gives { cron,
 * time_zone }, or null after saying at the field what is wrong; `controls` are the fields a problem's pointer names.
 */
export function whenEditor(initial = { cron: '0 4 * * *', time_zone: browserZone() }) {
  const read0 = readCron(initial.cron);
  const mode = h('select', { id: 'schedule-mode' }, MODES.map(([v, text]) => h('option', { value: v, selected: v === read0.mode }, text)));
  const time = h('input', { id: 'schedule-time', type: 'time', required: true, value: '04:00' });
  const days = DAYS.map(([n, name]) => h('input', { type: 'checkbox', id: `schedule-day-${n}`, value: n }));
  const daysError = h('p', { class: 'field-error', id: 'schedule-days-error', hidden: true });
  const daysBox = h('fieldset', { class: 'days', id: 'schedule-days', 'aria-describedby': 'schedule-days-error' },
    h('legend', {}, 'On these days'),
    h('div', { class: 'permissions' }, DAYS.map(([, name], i) => h('label', { class: 'check' }, days[i], ` ${name}`))), daysError);
  const every = h('select', { id: 'schedule-every' }, EVERY_HOURS.map((n) => h('option', { value: n }, n === 1 ? 'hour' : `${n} hours`)));
  const minute = h('input', { id: 'schedule-minute', type: 'number', min: 0, max: 59, step: 1, value: 0, inputmode: 'numeric' });
  const cron = h('input', { id: 'schedule-cron', name: 'cron', required: true, maxlength: 100, value: initial.cron, autocomplete: 'off', spellcheck: 'false' });
  const zone = zoneSelect('schedule-zone', initial.time_zone);
  const next = h('ol', { class: 'next-times', id: 'schedule-next', 'aria-labelledby': 'schedule-next-title', 'aria-live': 'polite' });
  const timeField = field('At', time);
  const everyField = field('Every', every);
  const minuteField = field('Minutes past the hour', minute, { help: '0 to 59; the first run is at midnight' });

  /** Puts a mode's values into the controls. */
  const load = (w) => {
    if (w.hour !== undefined) time.value = `${String(w.hour).padStart(2, '0')}:${String(w.minute).padStart(2, '0')}`;
    if (w.days) days.forEach((box) => (box.checked = w.days.includes(Number(box.value))));
    if (w.every) every.value = String(w.every);
    if (w.mode === 'hourly') minute.value = String(w.minute);
  };
  const shape = () => {
    const m = mode.value;
    timeField.hidden = m !== 'daily' && m !== 'weekly';
    daysBox.hidden = m !== 'weekly';
    everyField.hidden = minuteField.hidden = m !== 'hourly';
  };

  /**
   * The mode's values, or null after saying at its field what is wrong (the page's own checks, in words). No day
   * chosen is said only when `daysToo` (on saving, or when the last day is unticked), not on switching to the mode.
   */
  const chosen = (daysToo = true) => {
    const m = mode.value;
    if (m === 'daily' || m === 'weekly') {
      const problem = timeCheck(time.value, time.validity.badInput);
      say(time, problem);
      const picked = days.filter((b) => b.checked).map((b) => Number(b.value));
      const noDays = m === 'weekly' && picked.length === 0 ? 'Choose at least one day of the week.' : null;
      daysError.textContent = (daysToo && noDays) || '';
      daysError.hidden = !(daysToo && noDays);
      if (problem || noDays) return null;
      const [hour, min] = time.value.split(':').map(Number);
      return { mode: m, hour, minute: min, days: picked };
    }
    const n = Number(minute.value);
    const bad = minute.value === '' || !Number.isInteger(n) || n < 0 || n > 59;
    say(minute, bad ? 'Give the minutes past the hour as a whole number from 0 to 59.' : null);
    return bad ? null : { mode: m, every: Number(every.value), minute: n };
  };

  // The choices write the cron; a cron typed by hand makes the mode "advanced".
  const changed = (event) => {
    shape();
    if (mode.value === 'advanced') return previewSoon();
    const w = chosen(days.includes(event?.target));
    if (!w) return fill(next, h('li', { class: 'muted' }, 'Shown once the choices above are complete.'));
    cron.value = cronOf(w);
    say(cron, null);
    previewSoon();
  };
  mode.addEventListener('change', () => {
    const typed = readCron(cron.value);
    if (typed.mode === mode.value) load(typed); // the cron as typed already says it: keep its values
    changed();
  });
  for (const c of [time, every, minute, ...days]) c.addEventListener('change', changed);
  cron.addEventListener('input', () => {
    mode.value = 'advanced';
    shape();
    previewSoon();
  });
  zone.addEventListener('change', () => previewSoon(0));

  const cache = new Map(); // `${cron}\n${zone}` → the times: asked once
  let timer;
  let asked = 0;
  function previewSoon(ms = PREVIEW_MS) {
    clearTimeout(timer);
    timer = setTimeout(preview, ms);
  }
  async function preview() {
    if (!el.isConnected && asked > 0) return; // the page moved on
    const c = cron.value.trim();
    const z = zone.value;
    const problem = cronCheck(c);
    say(cron, problem);
    if (problem) return fill(next, h('li', { class: 'muted' }, 'Shown once the cron expression is complete.'));
    const key = `${c}\n${z}`;
    const mine = ++asked;
    try {
      if (!cache.has(key)) cache.set(key, (await api('GET', `/v1/schedule-times?${new URLSearchParams({ cron: c, time_zone: z, count: String(COUNT) })}`)).data);
      if (mine === asked) showTimes(cache.get(key), z);
    } catch (e) {
      if (mine !== asked) return;
      const errors = e.problem?.errors ?? [];
      const onZone = errors.filter((x) => x.pointer.endsWith('/time_zone')).map(problemWords);
      const onCron = errors.filter((x) => !x.pointer.endsWith('/time_zone')).map(problemWords);
      say(cron, onCron.join(' ') || (errors.length ? null : `The next runs could not be read: ${e.message}`));
      say(zone, onZone.join(' ') || null);
      fill(next, h('li', { class: 'muted' }, 'No times to show until the cron expression is fixed.'));
    }
  }
  const reader = browserZone();
  function showTimes(times, z) {
    const there = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: z });
    fill(next, times.length
      ? times.map((t) => h('li', {}, z === reader
        ? timeEl(t)
        : [h('span', { class: 'zone-time' }, `${there.format(Date.parse(t))} ${zoneText(z)} time`), h('span', { class: 'muted' }, ' (your time: '), timeEl(t), h('span', { class: 'muted' }, ')')]))
      : h('li', { class: 'muted' }, 'No time ahead: it would never run.'));
  }

  load(read0);
  shape();
  const el = h('fieldset', { class: 'when' },
    h('legend', {}, 'When'),
    h('div', { class: 'row' }, field('Repeats', mode), timeField, everyField, minuteField),
    daysBox,
    h('div', { class: 'row' },
      field('Cron', cron, { help: 'minute hour day-of-month month day-of-week; the choices above write it, or write your own' }),
      field('Time zone', zone, { help: `Yours is ${zoneText(reader)}.` })),
    h('p', { class: 'help', id: 'schedule-next-title' }, 'Next runs:'), next);
  preview();

  return {
    el,
    controls: [['/body/cron', cron], ['/body/time_zone', zone]],
    /** { cron, time_zone }, or null after saying at the field what is wrong. */
    read() {
      if (mode.value !== 'advanced' && !chosen()) return null;
      const problem = cronCheck(cron.value);
      say(cron, problem);
      if (problem) return null;
      return { cron: cron.value.trim(), time_zone: zone.value };
    },
    /** The first control that says it is wrong, to focus. */
    invalid: () => el.querySelector('[aria-invalid="true"]') ?? (daysError.hidden ? null : days[0]),
  };
}
