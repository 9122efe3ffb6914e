// One server: its state and power buttons, live charts of TPS, RAM, CPU and players (history from
// GET …/metrics?range=, kept live by the SSE stream …/metrics/stream), and the console (recent lines, live
// lines from …/console/stream, and a command input), its settings and player lists (server-data.js), its
// backups (backups.js), its alert rules and its event timeline (alerts.js).
import { api, follow } from './api.js';
import { h, fill, announce, errorBox, every, fmtBytes, fmtNumber, fmtClock } from './dom.js';
import { powerButtons } from './actions.js';
import { addressText, field, gameOf, stateBadge } from './servers.js';
import { lineChart } from './chart.js';
import { backupsSection } from './backups.js';
import { alertsSection, timelineSection } from './alerts.js';
import { playerListsSection, settingsSection } from './server-data.js';

const RANGES = [['15m', '15 minutes', 15 * 60e3], ['1h', '1 hour', 3600e3], ['24h', '24 hours', 86400e3], ['7d', '7 days', 7 * 86400e3], ['30d', '30 days', 30 * 86400e3]];
const SERIES = [
  { key: 'tps', title: 'TPS (ticks per second; Luanti: server steps per second, nominally 11)', format: (v) => fmtNumber(v), floorMax: 20, pick: (x) => x.tps },
  { key: 'ram_bytes', title: 'RAM', format: fmtBytes, floorMax: 64 * 1024 ** 2, pick: (x) => x.ram_bytes },
  { key: 'cpu_percent', title: 'CPU (% of one core)', format: (v) => `${fmtNumber(v)}%`, floorMax: 10, pick: (x) => x.cpu_percent },
  { key: 'players_online', title: 'Players online', format: (v) => fmtNumber(v, 0), floorMax: 1, pick: (x) => x.players_online },
];
const LIVE_KEEP = 2000; // live samples kept per page (the right end of the chart, finer than history)
const REFRESH_MS = 3000;
const CONSOLE_KEEP = 1000;

export async function serverView(main, signal, id) {
  const [server, versions] = await Promise.all([api('GET', `/v1/servers/${id}`), api('GET', '/v1/versions')]);
  const game = gameOf(versions.data);
  const heading = h('h1', {}, server.name);
  const facts = h('dl', { class: 'facts' });
  const outcome = h('div', { class: 'outcome' });
  const buttons = h('div');
  const metrics = metricsSection(id, signal);
  const consoleBox = consoleSection(id, signal);
  const data = [settingsSection(server), playerListsSection(server), backupsSection(server, signal), alertsSection(server, signal), timelineSection(server, signal)];
  fill(main, h('p', {}, h('a', { href: '#/servers' }, '← All servers')), heading, facts, buttons, outcome, metrics.el, consoleBox, ...data);
  document.title = `${server.name} · Dashboard`;

  let shown = '';
  const show = (s) => {
    const key = JSON.stringify([s.name, s.state, s.address]);
    if (key === shown) return;
    shown = key;
    heading.textContent = s.name;
    if (s.state !== 'running') metrics.notRunning(); // the stream sends nothing then; do not show a stale "now"
    fill(facts,
      h('dt', {}, 'State'), h('dd', { id: 'server-state' }, stateBadge(s.state)),
      h('dt', {}, 'Address'), h('dd', {}, addressText(s.address)),
      h('dt', {}, 'Game'), h('dd', {}, game(s)),
      h('dt', {}, 'Plan'), h('dd', {}, s.plan),
      h('dt', {}, 'Version'), h('dd', {}, s.version));
    const changed = () => refresh().catch((e) => announce(e.message));
    fill(buttons, powerButtons(s, outcome, changed, signal, () => (location.hash = '#/servers')));
  };
  async function refresh() {
    try {
      show(await api('GET', `/v1/servers/${id}`));
    } catch (e) {
      if (e.status === 404) location.hash = '#/servers'; // deleted elsewhere
      else throw e;
    }
  }
  show(server);
  every(REFRESH_MS, signal, refresh);
  await metrics.start();
}

function metricsSection(id, signal) {
  const charts = SERIES.map((s) => ({ ...s, chart: lineChart(s) }));
  const now = h('dl', { class: 'now', id: 'metrics-now' });
  const error = h('div');
  let range = RANGES[1];
  let history = []; // points from GET …/metrics, { t, tps, ram_bytes, cpu_percent, players_online }
  let live = []; // samples from the stream
  let from = Date.now() - range[2];

  const picker = h('fieldset', { class: 'ranges' }, h('legend', {}, 'Range'),
    RANGES.map(([value, text]) => h('label', {},
      h('input', { type: 'radio', name: 'range', value, checked: value === range[0], onchange: () => pick(value) }), ` ${text}`)));

  function draw() {
    const to = Math.max(Date.now(), live.length ? live[live.length - 1].t : 0);
    const lastHistory = history.length ? history[history.length - 1].t : -Infinity;
    const all = history.concat(live.filter((s) => s.t > lastHistory));
    for (const c of charts) c.chart.update(all.map((p) => ({ t: p.t, v: c.pick(p) ?? null })), Math.min(from, to - range[2]), to);
  }

  function showNow(sample) {
    if (!sample) return void fill(now, h('dt', {}, 'Now'), h('dd', {}, 'not running'));
    now.setAttribute('data-sample-id', sample.id);
    fill(now,
      h('dt', {}, 'Sampled'), h('dd', {}, fmtClock(Date.parse(sample.at))),
      h('dt', {}, 'TPS'), h('dd', { id: 'now-tps' }, fmtNumber(sample.tps)),
      h('dt', {}, 'RAM'), h('dd', {}, fmtBytes(sample.ram_bytes)),
      h('dt', {}, 'CPU'), h('dd', {}, `${fmtNumber(sample.cpu_percent)}%`),
      h('dt', {}, 'Players'), h('dd', {}, `${sample.players_online} / ${sample.players_max}`));
  }

  async function load() {
    const m = await api('GET', `/v1/servers/${id}/metrics?range=${range[0]}`);
    from = Date.parse(m.from);
    history = m.points.map((p) => ({
      t: Date.parse(p.at),
      tps: p.tps?.avg ?? null,
      ram_bytes: p.ram_bytes.avg,
      cpu_percent: p.cpu_percent.avg,
      players_online: p.players_online.avg,
    }));
    error.replaceChildren();
    draw();
    return m;
  }

  async function pick(value) {
    range = RANGES.find((r) => r[0] === value);
    try {
      await load();
      announce(`Showing the last ${range[1]}.`);
    } catch (e) {
      error.replaceChildren(errorBox(`Could not load metrics: ${e.message}`));
    }
  }

  async function start() {
    const m = await load();
    showNow(m.now);
    // Resume the stream after the newest sample we already have, so none is lost in between.
    follow(`/v1/servers/${id}/metrics/stream`, (e) => {
      if (e.event !== 'sample') return;
      const s = JSON.parse(e.data);
      live.push({ ...s, t: Date.parse(s.at) });
      if (live.length > LIVE_KEEP) live = live.slice(-LIVE_KEEP);
      showNow(s);
      draw();
    }, signal, m.now?.id).catch((e) => error.replaceChildren(errorBox(`The live metrics stopped: ${e.message}`)));
  }

  const el = h('section', { 'aria-labelledby': 'metrics-title' },
    h('h2', { id: 'metrics-title' }, 'Metrics'), picker, now, error,
    h('div', { class: 'charts' }, charts.map((c) => c.chart.el)));
  return { el, start, notRunning: () => showNow(null) };
}

function consoleSection(id, signal) {
  const log = h('div', { class: 'console', role: 'log', 'aria-label': 'Console output', tabindex: 0 });
  const error = h('div');
  const input = h('input', { id: 'console-command', name: 'command', required: true, maxlength: 1000, autocomplete: 'off' });
  const form = h('form', { class: 'row' }, field('Command', input), h('button', { type: 'submit' }, 'Send'));

  const add = (line) => {
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    log.append(h('div', { class: `line ${line.stream}` }, line.text));
    while (log.childElementCount > CONSOLE_KEEP) log.firstElementChild.remove();
    if (atBottom) log.scrollTop = log.scrollHeight; // follow the tail unless the reader scrolled up
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.replaceChildren();
    try {
      await api('POST', `/v1/servers/${id}/console`, { command: input.value });
      input.value = '';
    } catch (e) {
      error.replaceChildren(errorBox(`Not sent: ${e.message}`));
    }
  });

  (async () => {
    const recent = await api('GET', `/v1/servers/${id}/console?limit=200`);
    recent.data.forEach(add);
    const last = recent.data.length ? String(recent.data[recent.data.length - 1].seq) : '0';
    await follow(`/v1/servers/${id}/console/stream`, (e) => e.event === 'line' && add(JSON.parse(e.data)), signal, last);
  })().catch((e) => error.replaceChildren(errorBox(`The console stopped: ${e.message}`)));

  return h('section', { 'aria-labelledby': 'console-title' }, h('h2', { id: 'console-title' }, 'Console'), log, form, error);
}
