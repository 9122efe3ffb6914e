// A server's own fields, on its owner's page (updateServer, the spec's UpdateServerRequest): its name and plan, its
// idle stop (IdleStopMinutes) and its automatic backups (BackupSchedule: every N hours, or at the times a cron names
// in UTC, keeping at most the plan's number). The plan changes only while the game is stopped or crashed (a running
// game keeps the memory it started with: `409` otherwise), so the page says so instead of offering it. Each form
// sends only what changed; a refusal is put at its field (RFC 9457 `errors`, problems.js). Read nothing itself:
// the server comes from the page (server.js), which calls update() with each newer read.
import { api } from './api.js';
import { h, announce, errorBox, field, showFieldErrors } from './dom.js';
import { plural } from './format.js';
import { planFigures } from './catalog.js';
import { sayAs } from './problems.js';
import { whenText } from './cron-words.js';

/** The states updateServer takes a new plan in. */
const PLAN_STATES = ['stopped', 'crashed'];

/** Why the plan cannot change now, in words; null when it can. */
export function planLockedWhy(state) {
  if (PLAN_STATES.includes(state)) return null;
  if (state === 'deleting') return 'The server is being deleted.';
  return `The plan can change only while the server is stopped or crashed: a running game keeps the memory it started with. It is ${state} now; stop it first.`;
}

const said = (out, text, failed = false) => {
  out.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
  announce(text, failed);
};

/** A refusal at its fields, or said in `out` when no field took it. */
function refused(form, controls, out, e, what) {
  const left = showFieldErrors(form, controls, e.problem?.errors ?? []);
  if (left.length || !e.problem?.errors?.length) said(out, `${what}: ${e.message}`, true);
}

function nameAndPlan(cat, current, changed) {
  const out = h('div', { class: 'outcome' });
  const name = h('input', { id: 'manage-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off', value: current.server.name });
  sayAs(name, { label: 'the name', empty: 'Give the server a name.', maxLength: 'A server name can be at most 64 characters long.',
    pattern: 'A server name cannot hold control characters, such as a tab or a line break.' });
  const plan = h('select', { id: 'manage-plan', name: 'plan' },
    cat.plans.map((p) => h('option', { value: p.id, selected: p.id === current.server.plan }, `${p.name}: ${planFigures(p)}`)));
  const planField = field('Plan', plan, { help: ' ' });
  const why = planField.querySelector('.help');
  const controls = new Map([['/body/name', name], ['/body/plan', plan]]);
  const form = h('form', { class: 'card', 'aria-labelledby': 'manage-name-title', novalidate: true },
    h('h3', { id: 'manage-name-title' }, 'Name and plan'),
    h('div', { class: 'row' }, field('Server name', name), planField),
    h('button', { type: 'submit' }, 'Save name and plan'), out);

  const update = (s) => {
    const locked = planLockedWhy(s.state);
    plan.disabled = Boolean(locked);
    if (locked) plan.value = s.plan; // what it is, not a choice it cannot take now
    why.textContent = locked ?? 'A larger plan counts against your account\'s memory quota; a smaller one is always accepted.';
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const s = current.server;
    const change = {};
    if (name.value.trim() !== s.name) change.name = name.value.trim();
    if (!plan.disabled && plan.value !== s.plan) change.plan = plan.value;
    showFieldErrors(form, controls, []);
    if (!Object.keys(change).length) return void said(out, 'Nothing changed.');
    try {
      const saved = await api('PATCH', `/v1/servers/${s.id}`, change);
      name.value = saved.name;
      const words = [change.name && `Renamed to ${saved.name}.`, change.plan && `The plan is now ${cat.plan(saved.plan)?.name ?? saved.plan}.`];
      said(out, words.filter(Boolean).join(' '));
      changed(saved);
    } catch (e) {
      refused(form, controls, out, e, 'Not saved');
    }
  });
  return { el: form, update };
}

/** "off", "every" or "cron": which kind of BackupSchedule `s` is. */
const modeOf = (s) => (!s ? 'off' : s.cron !== undefined ? 'cron' : 'every');

function automatic(cat, current, changed) {
  const out = h('div', { class: 'outcome' });
  const s0 = current.server;
  const planBackups = () => cat.plan(current.server.plan)?.backups ?? 100;
  const idleOn = h('input', { type: 'checkbox', id: 'idle-stop-on', name: 'idle_stop_on', checked: s0.idle_stop_minutes !== null });
  const idle = h('input', { id: 'idle-stop-minutes', name: 'idle_stop_minutes', type: 'number', min: 1, max: 10080, step: 1, value: s0.idle_stop_minutes ?? 30 });
  sayAs(idle, { label: 'the minutes without players', empty: 'Give the minutes without players, or turn the idle stop off.' });
  const mode = h('select', { id: 'backup-mode', name: 'backup_mode' },
    h('option', { value: 'off', selected: modeOf(s0.backup_schedule) === 'off' }, 'Off'),
    h('option', { value: 'every', selected: modeOf(s0.backup_schedule) === 'every' }, 'Every few hours'),
    h('option', { value: 'cron', selected: modeOf(s0.backup_schedule) === 'cron' }, 'At set times (cron, UTC)'));
  const every = h('input', { id: 'backup-every-hours', name: 'every_hours', type: 'number', min: 1, max: 720, step: 1, value: s0.backup_schedule?.every_hours ?? 6 });
  sayAs(every, { label: 'the hours between backups', empty: 'Give the hours between backups.', type: 'The hours between backups must be a whole number.' });
  const cron = h('input', { id: 'backup-cron', name: 'cron', maxlength: 100, autocomplete: 'off', spellcheck: 'false', value: s0.backup_schedule?.cron ?? '0 4 * * *' });
  sayAs(cron, { label: 'the cron expression' });
  const keep = h('input', { id: 'backup-keep', name: 'keep', type: 'number', min: 1, max: planBackups(), step: 1, value: s0.backup_schedule?.keep ?? '' });
  sayAs(keep, { label: 'the number of backups to keep' });
  const idleField = field('Minutes without players', idle, { limit: '1 to 10080 (a week)', help: 'Counted from the last player seen, or from the start when nobody joined.' });
  const everyField = field('Hours between backups', every, { limit: '1 to 720' });
  const cronField = field('When (cron, in UTC)', cron, { help: ' ' });
  const keepField = field('Automatic backups to keep', keep, { help: ' ' });
  const controls = new Map([['/body/idle_stop_minutes', idle], ['/body/backup_schedule/every_hours', every],
    ['/body/backup_schedule/cron', cron], ['/body/backup_schedule/keep', keep], ['/body/backup_schedule', mode]]);
  const form = h('form', { class: 'card', 'aria-labelledby': 'automatic-title', novalidate: true },
    h('h3', { id: 'automatic-title' }, 'Idle stop and automatic backups'),
    h('div', { class: 'field' }, h('label', { class: 'check', for: 'idle-stop-on' }, idleOn, ' Stop the server when nobody has played for a while')),
    idleField,
    field('Automatic backups', mode),
    everyField, cronField, keepField,
    h('button', { type: 'submit' }, 'Save idle stop and backups'), out);

  const shape = () => {
    idle.disabled = !idleOn.checked;
    everyField.hidden = mode.value !== 'every';
    cronField.hidden = mode.value !== 'cron';
    keepField.hidden = mode.value === 'off';
    const words = whenText(cron.value.trim());
    cronField.querySelector('.help').textContent = words ? `${words}, UTC.` : 'Five fields: minute, hour, day of month, month, day of week; in UTC.';
    keep.max = planBackups();
    keepField.querySelector('.help').textContent = `1 to ${planBackups()}: your plan keeps ${plural(planBackups(), 'backup')}. Empty keeps as many as it allows; older automatic ones are deleted.`;
  };
  for (const el of [idleOn, mode, cron]) el.addEventListener(el === cron ? 'input' : 'change', shape);
  shape();

  const read = () => {
    const idleMinutes = idleOn.checked ? (idle.value === '' ? null : Number(idle.value)) : null;
    if (mode.value === 'off') return { idle_stop_minutes: idleMinutes, backup_schedule: null };
    const schedule = mode.value === 'every' ? { every_hours: every.value === '' ? null : Number(every.value) } : { cron: cron.value.trim() };
    if (keep.value !== '') schedule.keep = Number(keep.value);
    return { idle_stop_minutes: idleMinutes, backup_schedule: schedule };
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const s = current.server;
    const want = read();
    const change = {};
    if (want.idle_stop_minutes !== s.idle_stop_minutes) change.idle_stop_minutes = want.idle_stop_minutes;
    if (JSON.stringify(want.backup_schedule) !== JSON.stringify(s.backup_schedule)) change.backup_schedule = want.backup_schedule;
    showFieldErrors(form, controls, []);
    if (idleOn.checked && idle.value === '') return void showFieldErrors(form, controls, [{ pointer: '/body/idle_stop_minutes', rule: 'required' }]);
    if (!Object.keys(change).length) return void said(out, 'Nothing changed.');
    try {
      const saved = await api('PATCH', `/v1/servers/${s.id}`, change);
      said(out, `Saved. ${idleText(saved.idle_stop_minutes)} ${scheduleText(saved.backup_schedule)}`);
      changed(saved);
    } catch (e) {
      refused(form, controls, out, e, 'Not saved');
    }
  });
  return { el: form, update: () => shape() };
}

/** The idle stop in words. */
export function idleText(minutes) {
  return minutes === null ? 'It is never stopped for being idle.' : `It stops after ${plural(minutes, 'minute')} without players.`;
}

/** A BackupSchedule in words. */
export function scheduleText(s) {
  if (!s) return 'No automatic backups.';
  const keep = s.keep ? `, keeping the last ${s.keep}` : '';
  if (s.cron !== undefined) return `Automatic backups: ${whenText(s.cron) ?? `at ${s.cron}`} (UTC)${keep}.`;
  return `Automatic backups every ${plural(s.every_hours, 'hour')}${keep}.`;
}

/**
 * The owner's "Manage" section: name and plan, idle stop and automatic backups. `changed(server)` gets the server
 * as the service answered a change; update(server) takes each newer read (a stop lets the plan change).
 */
export function manageSection(cat, server, changed) {
  const current = { server };
  const parts = [nameAndPlan(cat, current, changed), automatic(cat, current, changed)];
  const update = (s) => {
    current.server = s;
    for (const p of parts) p.update(s);
  };
  update(server);
  const el = h('section', { 'aria-labelledby': 'manage-title' }, h('h2', { id: 'manage-title' }, 'Manage'), parts.map((p) => p.el));
  return { el, update };
}
