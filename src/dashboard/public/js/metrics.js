// A server's charts of TPS, RAM, CPU and players: history from GET …/metrics (a range back from now, or a
// from–to window of the customer's choosing: last Tuesday's lag), kept live by the SSE stream …/metrics/stream
// while the window ends now. The RAM chart's ceiling is the plan's memory, the CPU's its share, the players' its
// slots; the tick rate's title is the game's own (catalog.js tickTitle).
import { api, follow } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';
import { fmtBytes, fmtClock, fmtNumber, fmtTime, localInputValue, zoneName } from './format.js';
import { lineChart } from './chart.js';
import { tickTitle } from './catalog.js';
import { showStreamNote } from './live.js';

const RANGES = [['15m', '15 minutes', 15 * 60e3], ['1h', '1 hour', 3600e3], ['24h', '24 hours', 86400e3], ['7d', '7 days', 7 * 86400e3], ['30d', '30 days', 30 * 86400e3]];
const LIVE_KEEP = 2000; // live samples kept per page (the right end of the chart, finer than history)

function seriesFor(game, plan) {
  const tick = tickTitle(game);
  return [
    { key: 'tps', title: tick.title, format: (v) => fmtNumber(v), floorMax: tick.full, pick: (x) => x.tps },
    { key: 'ram_bytes', title: 'RAM', format: fmtBytes, floorMax: 64 * 1024 ** 2, pick: (x) => x.ram_bytes,
      ceiling: plan ? plan.memory_mb * 1024 ** 2 : null, ceilingText: `the plan's memory:` },
    { key: 'cpu_percent', title: 'CPU (% of one core)', format: (v) => `${fmtNumber(v, 0)}%`, floorMax: 10, pick: (x) => x.cpu_percent,
      ceiling: plan ? plan.cpu_percent : null, ceilingText: `the plan's share:` },
    { key: 'players_online', title: 'Players online', format: (v) => fmtNumber(v, 0), floorMax: 1, pick: (x) => x.players_online,
      ceiling: plan ? plan.player_slots : null, ceilingText: `the plan's slots:` },
  ];
}

export function metricsSection(id, signal, { game, plan, gone = () => undefined }) {
  const charts = seriesFor(game, plan).map((s) => ({ ...s, chart: lineChart(s) }));
  const now = h('dl', { class: 'now', id: 'metrics-now' });
  const error = h('div');
  const note = h('p', { class: 'muted', id: 'metrics-note', role: 'status', hidden: true });
  let range = RANGES[1];
  let custom = null; // { from, to } in ms while a chosen window is shown
  let history = []; // points from GET …/metrics, { t, tps, ram_bytes, cpu_percent, players_online }
  let live = []; // samples from the stream
  let from = Date.now() - range[2];
  let to = Date.now();
  let reads = 0; // history reads begun: only the newest one draws (a window picked while another is read)

  const fromInput = h('input', { id: 'metrics-from', type: 'datetime-local', step: 60 });
  const toInput = h('input', { id: 'metrics-to', type: 'datetime-local', step: 60 });
  const customForm = h('form', { class: 'row custom-range', hidden: true },
    field(`From (${zoneName()})`, fromInput), field(`To (${zoneName()})`, toInput), h('button', { type: 'submit' }, 'Show'));
  const picker = h('fieldset', { class: 'ranges' }, h('legend', {}, 'Window'),
    RANGES.map(([value, text]) => h('label', {},
      h('input', { type: 'radio', name: 'range', value, checked: value === range[0], onchange: () => pick(value) }), ` Last ${text}`)),
    h('label', {}, h('input', { type: 'radio', name: 'range', value: 'custom', onchange: () => showCustom() }), ' From … to …'));

  function draw() {
    const end = custom ? custom.to : Math.max(Date.now(), live.length ? live[live.length - 1].t : 0);
    const lastHistory = history.length ? history[history.length - 1].t : -Infinity;
    const all = custom ? history : history.concat(live.filter((s) => s.t > lastHistory));
    const start = custom ? from : Math.min(from, end - range[2]);
    for (const c of charts) c.chart.update(all.map((p) => ({ t: p.t, v: c.pick(p) ?? null })), start, end);
  }

  function showNow(sample) {
    if (!sample) return void fill(now, h('div', {}, h('dt', {}, 'Now'), h('dd', {}, 'not running')));
    now.setAttribute('data-sample-id', sample.id);
    const item = (label, value, id) => h('div', {}, h('dt', {}, label), h('dd', id ? { id } : {}, value));
    fill(now,
      item('Sampled', h('time', { datetime: sample.at }, fmtClock(sample.at))),
      item('TPS', fmtNumber(sample.tps), 'now-tps'),
      item('RAM', `${fmtBytes(sample.ram_bytes)}${plan ? ` of ${fmtBytes(plan.memory_mb * 1024 ** 2)}` : ''}`, 'now-ram'),
      item('CPU', `${fmtNumber(sample.cpu_percent)}%`),
      item('Players', `${sample.players_online} / ${sample.players_max}`));
  }

  /**
   * Reads and draws the window chosen now. Null when a newer read began meanwhile (its answer, whenever it comes,
   * draws, and an older one's must not: two picks in a row would otherwise show the first's window under the second's
   * choice, and say the second twice); throws only for the newest read.
   */
  async function load() {
    const read = ++reads;
    const query = custom
      ? `from=${encodeURIComponent(new Date(custom.from).toISOString())}&to=${encodeURIComponent(new Date(custom.to).toISOString())}`
      : `range=${range[0]}`;
    const m = await api('GET', `/v1/servers/${id}/metrics?${query}`).catch((e) => {
      if (read === reads) throw e;
      return null;
    });
    if (read !== reads) return null;
    from = Date.parse(m.from);
    to = Date.parse(m.to);
    history = m.points.map((p) => ({
      t: Date.parse(p.at), tps: p.tps?.avg ?? null, ram_bytes: p.ram_bytes.avg, cpu_percent: p.cpu_percent.avg, players_online: p.players_online.avg,
    }));
    error.replaceChildren();
    draw();
    return m;
  }

  async function pick(value) {
    custom = null;
    customForm.hidden = true;
    range = RANGES.find((r) => r[0] === value);
    try {
      if (await load()) announce(`Showing the last ${range[1]}.`);
    } catch (e) {
      error.replaceChildren(errorBox(`Could not load metrics: ${e.message}`));
    }
  }

  function showCustom() {
    customForm.hidden = false;
    if (!fromInput.value) fromInput.value = localInputValue(Date.now() - 2 * 3600e3);
    if (!toInput.value) toInput.value = localInputValue(Date.now());
    fromInput.focus();
  }

  customForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = { from: new Date(fromInput.value).getTime(), to: new Date(toInput.value).getTime() };
    if (Number.isNaN(chosen.from) || Number.isNaN(chosen.to)) return void error.replaceChildren(errorBox('Give both times.'));
    const previous = custom;
    custom = chosen;
    try {
      if (await load()) announce(`Showing ${fmtTime(chosen.from)} to ${fmtTime(chosen.to)}.`);
    } catch (e) {
      custom = previous;
      error.replaceChildren(errorBox(`Could not load metrics: ${e.message}`));
    }
  });

  async function start() {
    const m = await load(); // null if a window was picked meanwhile: the live samples fill in what is now
    if (m) showNow(m.now);
    // Resume the stream after the newest sample we already have, so none is lost in between.
    follow(`/v1/servers/${id}/metrics/stream`, (e) => {
      if (e.event !== 'sample') return;
      const s = JSON.parse(e.data);
      live.push({ ...s, t: Date.parse(s.at) });
      if (live.length > LIVE_KEEP) live = live.slice(-LIVE_KEEP);
      showNow(s);
      if (!custom) draw();
    }, signal, m?.now?.id, showStreamNote(note, 'Live samples'))
      .catch((e) => (e.problem?.code === 'server_not_found' ? gone() : error.replaceChildren(errorBox(`The live metrics stopped: ${e.message}`))));
  }

  const el = h('section', { 'aria-labelledby': 'metrics-title' },
    h('h2', { id: 'metrics-title' }, 'Metrics'), picker, customForm, note, now, error,
    h('div', { class: 'charts' }, charts.map((c) => c.chart.el)));
  return { el, start, notRunning: () => showNow(null), window: () => ({ from, to }) };
}
