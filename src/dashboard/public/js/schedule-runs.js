// The run history of a server's schedules, in an area of its own below the list (issue 38 §5): one disclosure per
// schedule, read when opened, newest runs first, paged with "Show more" (listServerScheduleRuns). An open history is
// read again when the account's events say a run of its schedule ended (schedules.js; docs/dashboard-budget.md).
import { api } from './api.js';
import { h, fill, errorBox } from './dom.js';
import { timeEl } from './format.js';

const PAGE = 10;
const TRIGGER = { manual: 'started with Run now', missed: 'ran late: the service was down at its time' };

/** What a task does, in words. */
export function taskText(t) {
  const after = t.delay_seconds ? `after ${t.delay_seconds} s, ` : '';
  if (t.type === 'command') return `${after}send “${t.command}”`;
  if (t.type === 'power') return `${after}${t.action}`;
  return `${after}back up`;
}

function runItem(s, r) {
  return h('li', { 'data-run-status': r.status, 'data-run-id': r.id },
    timeEl(r.started_at), ' ', h('strong', { class: `badge run-${r.status}` }, r.status),
    TRIGGER[r.trigger] ? ` (${TRIGGER[r.trigger]})` : '',
    r.detail ? ` ${r.detail}` : '',
    h('ul', {}, r.tasks.map((t, i) => h('li', {}, `${taskText(s.tasks[i] ?? t)}: ${t.status}${t.error ? ` (${t.error.detail})` : ''}`))));
}

/** The area: `sync(schedules)` after each read of the list; `toggle(id)` and `reload(id)` for a row's buttons. */
export function runHistory(server) {
  const boxes = new Map(); // schedule id → its disclosure and what it has read
  const area = h('div', { class: 'run-boxes' });
  const el = h('section', { class: 'run-history', 'aria-labelledby': 'schedule-runs-title' },
    h('h3', { id: 'schedule-runs-title' }, 'Run history'), area);

  const path = (id, cursor) => `/v1/servers/${server.id}/schedules/${id}/runs?limit=${PAGE}${cursor ? `&starting_after=${cursor}` : ''}`;

  function draw(b) {
    fill(b.list, b.runs.map((r) => runItem(b.schedule, r)));
    b.list.hidden = b.runs.length === 0;
    b.empty.hidden = !b.loaded || b.runs.length > 0;
    b.more.hidden = !b.cursor;
  }

  /** The newest page again; the older pages already shown stay when the new page reaches them (no gap between). */
  async function reload(id) {
    const b = boxes.get(id);
    if (!b) return;
    try {
      const page = await api('GET', path(id));
      const joins = page.has_more ? b.runs.findIndex((r) => r.id === page.data.at(-1).id) : -1;
      if (joins >= 0) b.runs = [...page.data, ...b.runs.slice(joins + 1)];
      else [b.runs, b.cursor] = [page.data, page.has_more ? page.next_cursor : null];
      b.loaded = true;
      b.error.replaceChildren();
      draw(b);
    } catch (e) {
      b.error.replaceChildren(errorBox(`Could not read the runs: ${e.message}`));
    }
  }

  async function more(b, button) {
    button.disabled = true;
    try {
      const page = await api('GET', path(b.schedule.id, b.cursor));
      b.runs.push(...page.data.filter((r) => !b.runs.some((x) => x.id === r.id)));
      b.cursor = page.has_more ? page.next_cursor : null;
      draw(b);
      b.list.lastElementChild?.scrollIntoView({ block: 'nearest' });
    } catch (e) {
      b.error.replaceChildren(errorBox(`Could not read more runs: ${e.message}`));
    } finally {
      button.disabled = false;
    }
  }

  function box(s) {
    const b = { schedule: s, runs: [], cursor: null, loaded: false };
    b.list = h('ol', { class: 'runs', 'aria-label': `Runs of ${s.name}`, hidden: true });
    b.empty = h('p', { class: 'muted', hidden: true }, 'It has not run yet.');
    b.error = h('div');
    b.more = h('button', { type: 'button', class: 'quiet', hidden: true, 'aria-label': `Show more runs of ${s.name}`, onclick: (e) => more(b, e.currentTarget) }, 'Show more');
    b.summary = h('summary', {}, s.name);
    b.details = h('details', { class: 'runs-box', id: `runs-${s.id}`, 'data-schedule-id': s.id }, b.summary, b.list, b.empty, b.more, b.error);
    b.details.addEventListener('toggle', () => {
      for (const button of document.querySelectorAll(`[aria-controls="runs-${s.id}"]`)) button.setAttribute('aria-expanded', String(b.details.open));
      if (b.details.open) reload(s.id);
      else Object.assign(b, { runs: [], cursor: null, loaded: false }); // closed, it is read afresh when opened again
    });
    return b;
  }

  return {
    el,
    /** One disclosure per schedule, in the list's order; a renamed schedule's summary follows. */
    sync(schedules) {
      for (const id of [...boxes.keys()]) if (!schedules.some((s) => s.id === id)) boxes.delete(id);
      for (const s of schedules) {
        const b = boxes.get(s.id) ?? box(s);
        b.schedule = s;
        b.summary.textContent = s.name;
        b.list.setAttribute('aria-label', `Runs of ${s.name}`);
        boxes.set(s.id, b);
      }
      fill(area, schedules.length ? schedules.map((s) => boxes.get(s.id).details) : h('p', { class: 'muted' }, 'No schedules, so no runs.'));
    },
    isOpen: (id) => boxes.get(id)?.details.open ?? false,
    /** Opens or closes a schedule's history; opened, it is brought into view with the focus on its summary. */
    toggle(id) {
      const b = boxes.get(id);
      if (!b) return;
      b.details.open = !b.details.open;
      if (b.details.open) {
        b.summary.focus();
        b.details.scrollIntoView({ block: 'nearest' });
      }
    },
    /** After "Run now": the history open, showing the run that began. */
    async ranNow(id) {
      const b = boxes.get(id);
      if (!b) return;
      if (b.details.open) await reload(id);
      else b.details.open = true; // its toggle event reads it
    },
    /** Every open history read again (a run ended: schedule.* events). */
    async refreshOpen() {
      for (const [id, b] of boxes) if (b.details.open) await reload(id);
    },
  };
}
