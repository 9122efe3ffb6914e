// A server's schedules (…/schedules): the list with each one's next run, run now, its history of runs, delete;
// and a form to make one, with a cron helper (presets, and the next times the service says the cron names:
// GET /v1/schedule-times) and an ordered list of tasks, each after a delay. What a member may do with a schedule
// follows their permissions: every task's (a command needs console, a power action power, a backup backups).
import { api, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, showFieldErrors, table } from './dom.js';
import { timeEl } from './format.js';
import { whenChanged } from './live.js';

const HISTORY = 10; // the newest runs shown
const NEEDS = { command: 'console', power: 'power', backup: 'backups' };
const PRESETS = [
  ['0 4 * * *', 'Every day at 04:00'],
  ['0 * * * *', 'Every hour'],
  ['*/15 * * * *', 'Every 15 minutes'],
  ['0 6 * * 1', 'Every Monday at 06:00'],
  ['', 'Something else (type the cron below)'],
];

/** What a task does, in words. */
export function taskText(t) {
  const after = t.delay_seconds ? `after ${t.delay_seconds} s, ` : '';
  if (t.type === 'command') return `${after}send “${t.command}”`;
  if (t.type === 'power') return `${after}${t.action}`;
  return `${after}back up`;
}

export function schedulesSection(server, signal) {
  const may = (type) => server.access.permissions.includes(NEEDS[type]);
  const mayAll = (s) => s.tasks.every((t) => may(t.type));
  const list = h('div');
  const outcome = h('div', { class: 'outcome' });
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };
  const act = (fn) => busyWhile(fn, (message) => say(message, true), () => refresh());
  const histories = new Map(); // schedule id → its open history element

  async function showHistory(s, box) {
    const page = await api('GET', `/v1/servers/${server.id}/schedules/${s.id}/runs?limit=${HISTORY}`);
    fill(box, page.data.length
      ? h('ol', { class: 'runs', 'aria-label': `Runs of ${s.name}` }, page.data.map((r) => h('li', { 'data-run-status': r.status },
        timeEl(r.started_at), ' ', h('strong', { class: `badge run-${r.status}` }, r.status),
        r.trigger === 'scheduled' ? '' : ` (${r.trigger})`,
        r.detail ? ` ${r.detail}` : '',
        h('ul', {}, r.tasks.map((t, i) => h('li', {}, `${taskText(s.tasks[i] ?? t)}: ${t.status}${t.error ? ` (${t.error.detail})` : ''}`))))))
      : h('p', { class: 'muted' }, 'It has not run yet.'));
  }

  const row = (s) => {
    const history = histories.get(s.id) ?? h('div', { class: 'history', hidden: true });
    histories.set(s.id, history);
    const toggle = act(async () => {
      history.hidden = !history.hidden;
      if (!history.hidden) await showHistory(s, history);
    });
    const run = act(async () => {
      await api('POST', `/v1/servers/${server.id}/schedules/${s.id}/run`, undefined, { 'Idempotency-Key': newKey() });
      say(`Running ${s.name} now.`);
      history.hidden = false;
      await new Promise((r) => setTimeout(r, 500));
      await showHistory(s, history);
    });
    const remove = act(async () => {
      if (!confirm(`Delete the schedule ${s.name}?`)) return;
      await api('DELETE', `/v1/servers/${server.id}/schedules/${s.id}`);
      say(`Deleted the schedule ${s.name}.`);
    });
    const allowed = mayAll(s);
    return [
      s.name,
      h('span', {}, h('code', {}, s.cron), ` ${s.time_zone}`, s.only_when ? `, only while ${s.only_when === 'running' ? 'running' : 'players are online'}` : ''),
      s.next_run_at ? timeEl(s.next_run_at) : h('span', { class: 'muted' }, 'disabled'),
      s.tasks.map(taskText).join('; then '),
      h('div', {},
        h('div', { class: 'buttons' },
          allowed ? h('button', { type: 'button', 'aria-label': `Run now: ${s.name}`, onclick: run }, 'Run now') : null,
          h('button', { type: 'button', 'aria-label': `History of ${s.name}`, 'aria-expanded': String(!history.hidden), onclick: toggle }, 'History'),
          allowed ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete the schedule ${s.name}`, onclick: remove }, 'Delete') : null),
        history),
    ];
  };

  let shown = '';
  async function refresh() {
    const schedules = await listAll(`/v1/servers/${server.id}/schedules`);
    const key = JSON.stringify(schedules);
    if (key === shown) return;
    shown = key;
    fill(list, schedules.length
      ? table(`Schedules of ${server.name}`, ['Name', 'When', 'Next run', 'Tasks', ''], schedules.map(row), (i) => ({ 'data-schedule-id': schedules[i].id }))
      : h('p', { class: 'muted' }, 'No schedules.'));
  }
  // A run moves a schedule's next run (schedule.ran, schedule.failed): the list, and the histories open, are read
  // again then; a schedule someone else made shows at the next visit (docs/dashboard-budget.md).
  const ran = async () => {
    await refresh();
    for (const [sid, box] of histories) {
      const s = JSON.parse(shown || '[]').find((x) => x.id === sid);
      if (s && !box.hidden) await showHistory(s, box);
    }
  };
  whenChanged(signal, (e) => e.server_id === server.id && e.type.startsWith('schedule.'), ran, { fallbackMs: 120_000 });
  refresh().catch((e) => say(`Could not list the schedules: ${e.message}`, true));

  const types = Object.keys(NEEDS).filter(may);
  return h('section', { 'aria-labelledby': 'schedules-title' },
    h('h2', { id: 'schedules-title' }, 'Schedules'),
    h('p', { class: 'muted' }, 'Tasks the server runs at set times, in order, each after its delay.'),
    types.length ? createForm(server, types, say, () => refresh()) : null,
    outcome, list);
}

function createForm(server, types, say, created) {
  const name = h('input', { id: 'schedule-name', name: 'name', required: true, maxlength: 100, autocomplete: 'off' });
  const preset = h('select', { id: 'schedule-preset' }, PRESETS.map(([cron, text]) => h('option', { value: cron }, text)));
  const cron = h('input', { id: 'schedule-cron', name: 'cron', required: true, maxlength: 100, value: PRESETS[0][0], autocomplete: 'off', spellcheck: 'false' });
  const zone = h('input', { id: 'schedule-zone', name: 'time_zone', required: true, maxlength: 64, value: Intl.DateTimeFormat().resolvedOptions().timeZone, autocomplete: 'off' });
  const when = h('select', { id: 'schedule-when', name: 'only_when' },
    h('option', { value: '' }, 'Always'), h('option', { value: 'running' }, 'Only while it is running'), h('option', { value: 'players_online' }, 'Only while players are online'));
  const nextTimes = h('ol', { class: 'next-times', id: 'schedule-next', 'aria-live': 'polite', 'aria-label': 'Next runs' });
  const tasks = h('ol', { class: 'tasks', id: 'schedule-tasks' });
  const controls = new Map([['/body/name', name], ['/body/cron', cron], ['/body/time_zone', zone]]);
  let serial = 0;

  const addTask = (type = types[0]) => {
    const n = ++serial;
    const kind = h('select', { id: `task-${n}-type` }, types.map((t) => h('option', { value: t, selected: t === type }, { command: 'Send a command', power: 'Power action', backup: 'Back up' }[t])));
    const command = h('input', { id: `task-${n}-command`, maxlength: 1000, autocomplete: 'off', value: 'say The server restarts in 5 minutes' });
    const action = h('select', { id: `task-${n}-action` }, ['restart', 'stop', 'start', 'kill'].map((a) => h('option', { value: a }, a)));
    const delay = h('input', { id: `task-${n}-delay`, type: 'number', min: 0, max: 3600, value: 0 });
    const commandField = field('Line to send', command);
    const actionField = field('Action', action);
    const shape = () => {
      commandField.hidden = kind.value !== 'command';
      actionField.hidden = kind.value !== 'power';
    };
    kind.addEventListener('change', shape);
    const item = h('li', { class: 'row task' }, field(`Task ${n}`, kind), commandField, actionField, field('Wait first (seconds)', delay),
      h('button', { type: 'button', class: 'danger', 'aria-label': `Remove task number ${n}`, onclick: () => item.remove() }, 'Remove'));
    item.read = () => {
      const t = { type: kind.value, delay_seconds: Number(delay.value) || 0 };
      if (t.type === 'command') t.command = command.value.trim();
      if (t.type === 'power') t.action = action.value;
      return t;
    };
    shape();
    tasks.append(item);
  };
  addTask();

  let asked = 0;
  async function helper() {
    const mine = ++asked;
    const q = new URLSearchParams({ cron: cron.value.trim(), time_zone: zone.value.trim(), count: '5' });
    try {
      const times = await api('GET', `/v1/schedule-times?${q}`);
      if (mine === asked) fill(nextTimes, times.data.map((t) => h('li', {}, timeEl(t))));
    } catch (e) {
      if (mine === asked) fill(nextTimes, h('li', { class: 'error' }, e.message));
    }
  }
  let timer;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(helper, 300);
  };
  cron.addEventListener('input', () => {
    preset.value = PRESETS.some(([c]) => c === cron.value.trim()) ? cron.value.trim() : '';
    later();
  });
  zone.addEventListener('input', later);
  preset.addEventListener('change', () => {
    if (preset.value) cron.value = preset.value;
    cron.focus();
    later();
  });
  helper();

  const form = h('form', { class: 'card', 'aria-labelledby': 'schedule-new', novalidate: true },
    h('h3', { id: 'schedule-new' }, 'New schedule'),
    h('div', { class: 'row' }, field('Schedule name', name), field('Repeats', preset), field('Cron', cron, { help: 'minute hour day month weekday' }), field('Time zone', zone), field('Condition', when)),
    h('div', {}, h('p', { class: 'help' }, 'Next runs:'), nextTimes),
    h('fieldset', {}, h('legend', {}, 'Tasks, in order'), tasks,
      h('button', { type: 'button', onclick: () => addTask() }, 'Add a task')),
    h('button', { type: 'submit' }, 'Create schedule'));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showFieldErrors(form, controls, []);
    const body = { name: name.value.trim(), cron: cron.value.trim(), time_zone: zone.value.trim(), only_when: when.value || null, tasks: [...tasks.children].map((li) => li.read()) };
    try {
      const made = await api('POST', `/v1/servers/${server.id}/schedules`, body, { 'Idempotency-Key': newKey() });
      name.value = '';
      say(`Created the schedule ${made.name}.`);
      await created();
    } catch (e) {
      const left = showFieldErrors(form, controls, e.problem?.errors ?? []);
      if (left.length || !e.problem?.errors?.length) say(`Could not create the schedule: ${e.message}`, true);
    }
  });
  return form;
}
