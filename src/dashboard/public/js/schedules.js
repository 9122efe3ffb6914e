// A server's schedules (…/schedules): the list, each with when it runs in words and its next run, run now, change,
// delete; a form to make or change one, whose "When" needs no cron (schedule-when.js: a time, weekdays, every N
// hours, or a cron by hand, in a time zone picked from a list) and an ordered list of tasks, each after a delay; and
// the run history in an area of its own (schedule-runs.js). What a member may do with a schedule follows their
// permissions: every task's (a command needs console, a power action power, a backup backups). Issue 38 §5.
import { api, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, showFieldErrors, table } from './dom.js';
import { timeEl } from './format.js';
import { whenChanged } from './live.js';
import { whenText, problemWords } from './cron-words.js';
import { whenEditor } from './schedule-when.js';
import { runHistory, taskText } from './schedule-runs.js';

export { taskText };
const NEEDS = { command: 'console', power: 'power', backup: 'backups' };
const CONDITION = { running: 'only while it is running', players_online: 'only while players are online' };

export function schedulesSection(server, signal) {
  const may = (type) => server.access.permissions.includes(NEEDS[type]);
  const mayAll = (s) => s.tasks.every((t) => may(t.type));
  const types = Object.keys(NEEDS).filter(may);
  const list = h('div');
  const outcome = h('div', { class: 'outcome' });
  const formSlot = h('div');
  const history = runHistory(server);
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };
  const act = (fn) => busyWhile(fn, (message) => say(message, true), () => refresh());

  /** The form to make a schedule, or to change `s`; after a change or a cancel, the focus goes back to its row. */
  const showForm = (s) => {
    const back = () => {
      showForm();
      if (s) document.querySelector(`[aria-label="Change ${CSS.escape(s.name)}"]`)?.focus();
    };
    const form = scheduleForm(server, types, s, say, async () => {
      await refresh();
      if (s) back();
    }, back);
    fill(formSlot, form);
    if (s) {
      form.scrollIntoView({ block: 'start' });
      form.querySelector('#schedule-name').focus();
    }
  };

  const row = (s) => {
    const run = act(async () => {
      await api('POST', `/v1/servers/${server.id}/schedules/${s.id}/run`, undefined, { 'Idempotency-Key': newKey() });
      say(`Running ${s.name} now; its run is in the run history below.`);
      await history.ranNow(s.id);
    });
    const remove = act(async () => {
      if (!confirm(`Delete the schedule ${s.name}?`)) return;
      await api('DELETE', `/v1/servers/${server.id}/schedules/${s.id}`);
      say(`Deleted the schedule ${s.name}.`);
    });
    const allowed = mayAll(s);
    const words = whenText(s.cron);
    return [
      s.name,
      h('span', {}, words ? [words, ' ', h('span', { class: 'muted' }, '(', h('code', {}, s.cron), ')')] : h('code', {}, s.cron),
        ` ${s.time_zone.replace(/_/g, ' ')}`, s.only_when ? `, ${CONDITION[s.only_when] ?? s.only_when}` : ''),
      s.next_run_at ? timeEl(s.next_run_at) : h('span', { class: 'muted' }, s.disabled_reason ? `disabled: ${s.disabled_reason}` : 'disabled'),
      s.tasks.map(taskText).join('; then '),
      h('div', { class: 'buttons' },
        allowed ? h('button', { type: 'button', 'aria-label': `Run now: ${s.name}`, onclick: run }, 'Run now') : null,
        allowed ? h('button', { type: 'button', class: 'quiet', 'aria-label': `Change ${s.name}`, onclick: () => showForm(s) }, 'Change') : null,
        h('button', { type: 'button', class: 'quiet', 'aria-label': `History of ${s.name}`, 'aria-controls': `runs-${s.id}`,
          'aria-expanded': String(history.isOpen(s.id)), onclick: () => history.toggle(s.id) }, 'History'),
        allowed ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete the schedule ${s.name}`, onclick: remove }, 'Delete') : null),
    ];
  };

  let shown = '';
  async function refresh() {
    const schedules = await listAll(`/v1/servers/${server.id}/schedules`);
    const key = JSON.stringify(schedules);
    if (key === shown) return;
    shown = key;
    history.sync(schedules);
    fill(list, schedules.length
      ? table(`Schedules of ${server.name}`, ['Name', 'When', 'Next run', 'Tasks', ''], schedules.map(row), (i) => ({ 'data-schedule-id': schedules[i].id }))
      : h('p', { class: 'muted' }, 'No schedules.'));
  }
  // A run moves a schedule's next run (schedule.ran, schedule.failed): the list, and the histories open, are read
  // again then; a schedule someone else made shows at the next visit (docs/dashboard-budget.md).
  const ran = async () => {
    await refresh();
    await history.refreshOpen();
  };
  whenChanged(signal, (e) => e.server_id === server.id && e.type.startsWith('schedule.'), ran, { fallbackMs: 120_000 });
  refresh().catch((e) => say(`Could not list the schedules: ${e.message}`, true));
  if (types.length) showForm();

  return h('section', { 'aria-labelledby': 'schedules-title' },
    h('h2', { id: 'schedules-title' }, 'Schedules'),
    h('p', { class: 'muted' }, 'Tasks the server runs at set times, in order, each after its delay.'),
    formSlot, outcome, list, history.el);
}

/** One task's controls, filled from `t`; `item.read()` gives the task, `item.check()` says what is wrong at its field. */
function taskItem(n, types, t = { type: types[0], delay_seconds: 0 }) {
  const kind = h('select', { id: `task-${n}-type` }, types.map((v) => h('option', { value: v, selected: v === t.type }, { command: 'Send a command', power: 'Power action', backup: 'Back up' }[v])));
  const command = h('input', { id: `task-${n}-command`, maxlength: 1000, autocomplete: 'off', value: t.command ?? 'say The server restarts in 5 minutes' });
  const action = h('select', { id: `task-${n}-action` }, ['restart', 'stop', 'start', 'kill'].map((a) => h('option', { value: a, selected: a === t.action }, a)));
  const delay = h('input', { id: `task-${n}-delay`, type: 'number', min: 0, max: 3600, value: t.delay_seconds ?? 0, inputmode: 'numeric' });
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
    const out = { type: kind.value, delay_seconds: Number(delay.value) || 0 };
    if (out.type === 'command') out.command = command.value.trim();
    if (out.type === 'power') out.action = action.value;
    return out;
  };
  item.controls = (i) => [[`/body/tasks/${i}/command`, command], [`/body/tasks/${i}/action`, action], [`/body/tasks/${i}/delay_seconds`, delay], [`/body/tasks/${i}`, kind]];
  item.problems = (i) => {
    const out = [];
    if (kind.value === 'command' && !command.value.trim()) out.push({ pointer: `/body/tasks/${i}/command`, detail: 'Write the line to send, such as say Restarting soon.' });
    const d = Number(delay.value);
    if (delay.value === '' || !Number.isInteger(d) || d < 0 || d > 3600) out.push({ pointer: `/body/tasks/${i}/delay_seconds`, detail: 'Wait a whole number of seconds from 0 to 3600.' });
    return out;
  };
  shape();
  return item;
}

/**
 * The form that makes a schedule or, given `schedule`, changes it (updateServerSchedule; its tasks replace the old
 * ones). Problems are said at their fields in words: the page's own checks first, then the service's `errors`
 * (cron-words.js problemWords), counted right.
 */
function scheduleForm(server, types, schedule, say, saved, cancel) {
  const editing = Boolean(schedule);
  const name = h('input', { id: 'schedule-name', name: 'name', required: true, maxlength: 100, autocomplete: 'off', value: schedule?.name ?? '' });
  const when = whenEditor(editing ? { cron: schedule.cron, time_zone: schedule.time_zone } : undefined);
  const condition = h('select', { id: 'schedule-condition', name: 'only_when' },
    h('option', { value: '' }, 'Always'), ...Object.entries(CONDITION).map(([v, text]) => h('option', { value: v, selected: v === schedule?.only_when }, `${text[0].toUpperCase()}${text.slice(1)}`)));
  const tasks = h('ol', { class: 'tasks', id: 'schedule-tasks' });
  const problem = h('div');
  let serial = 0;
  const addTask = (t) => tasks.append(taskItem(++serial, types, t));
  for (const t of editing ? schedule.tasks : [undefined]) addTask(t);

  const title = editing ? `Change “${schedule.name}”` : 'New schedule';
  const form = h('form', { class: 'card', 'aria-labelledby': 'schedule-new', novalidate: true },
    h('h3', { id: 'schedule-new' }, title),
    h('div', { class: 'row' }, field('Schedule name', name)),
    when.el,
    h('div', { class: 'row' }, field('Condition', condition)),
    h('fieldset', {}, h('legend', {}, 'Tasks, in order'), tasks,
      h('button', { type: 'button', onclick: () => addTask() }, 'Add a task')),
    problem,
    h('div', { class: 'buttons' },
      h('button', { type: 'submit' }, editing ? 'Save changes' : 'Create schedule'),
      editing ? h('button', { type: 'button', class: 'quiet', onclick: cancel }, 'Cancel') : null));

  const controlsNow = () => new Map([['/body/name', name], ...when.controls, ...[...tasks.children].flatMap((li, i) => li.controls(i))]);
  /** Above the buttons: how many fields need a change (each says why), and the problems no field took. */
  const summary = (atFields, left, fallback = '') => {
    const lines = left.map((e) => e.detail);
    if (atFields) lines.unshift(`Not saved: ${atFields === 1 ? '1 field needs a change, shown at it' : `${atFields} fields need a change, shown at them`}.`);
    else if (!lines.length && fallback) lines.push(fallback);
    problem.replaceChildren(...lines.map((l) => errorBox(l)));
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // The page's own checks, in words, before anything is sent: showFieldErrors clears the old ones and puts these
    // at their fields, then the "When" part says its own.
    const own = [];
    if (!name.value.trim()) own.push({ pointer: '/body/name', detail: 'Give the schedule a name.' });
    [...tasks.children].forEach((li, i) => own.push(...li.problems(i)));
    if (!tasks.children.length) own.push({ pointer: '/body/tasks', detail: 'Add at least one task.' });
    const left = showFieldErrors(form, controlsNow(), own);
    const at = when.read();
    summary(own.length - left.length + (at ? 0 : 1), left);
    if (own.length || !at) {
      (form.querySelector('[aria-invalid="true"]') ?? when.invalid())?.focus();
      return;
    }
    const body = { name: name.value.trim(), ...at, only_when: condition.value || null, tasks: [...tasks.children].map((li) => li.read()) };
    try {
      const done = editing
        ? await api('PATCH', `/v1/servers/${server.id}/schedules/${schedule.id}`, body)
        : await api('POST', `/v1/servers/${server.id}/schedules`, body, { 'Idempotency-Key': newKey() });
      if (!editing) name.value = '';
      say(editing ? `Saved the schedule ${done.name}.` : `Created the schedule ${done.name}.`);
      await saved();
    } catch (e) {
      const errors = (e.problem?.errors ?? []).map((x) => ({ pointer: x.pointer, detail: problemWords(x) }));
      const unplaced = showFieldErrors(form, controlsNow(), errors);
      summary(errors.length - unplaced.length, unplaced, `Not saved: ${e.message}`);
    }
  });
  return form;
}
