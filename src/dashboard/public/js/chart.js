// A line chart drawn as inline SVG: no charting library, so the page stays small and loads nothing else.
// The SVG is role="img" with a label that says what it shows in words. Pointing at it (mouse, touch) or moving
// along it with the arrow keys shows the value and time of the nearest point (issue 29: hover values).
import { h, fill } from './dom.js';
import { fmtAxis, fmtClock, fmtTime, zoneName } from './format.js';

const W = 600;
const H = 160;
const PAD = { left: 70, right: 10, top: 12, bottom: 24 };
const GAP = 6; // between a value label and the axis

/**
 * `title` names the chart, `format` renders a value with its unit, `floorMax` is the least the y axis shows (so
 * 20 TPS fills the chart and a flat line near zero is not magnified into noise), `ceiling` (optional) is the
 * plan's limit, drawn as a line and the top of the axis (the RAM chart's plan memory).
 */
export function lineChart({ key, title, format, floorMax, ceiling = null, ceilingText = '' }) {
  // Labelled from the start: a chart whose first read failed (a dropped request) is still an image with a name.
  const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}: not read yet`, class: 'chart', 'data-points': 0, tabindex: 0, 'data-chart': key });
  const tip = h('div', { class: 'chart-tip', hidden: true, 'data-chart-tip': key });
  const figure = h('figure', { class: 'chart-box' }, h('figcaption', {}, title, ' ', h('span', { class: 'zone' }, `(times in ${zoneName()})`)), svg, tip);
  let shown = [];
  let x = () => 0;
  let y = () => 0;
  let at = -1;
  // Room left of the axis for the value labels: they are drawn in CSS pixels that a narrow chart scales up (a
  // phone's 19 px text in a 600-unit box), so "512 MiB" can be wider than any fixed room. Measured after drawing;
  // the chart is drawn again with the room its labels take, so none is clipped (issue 38 §2).
  let left = PAD.left;

  /** points: [{ t: ms, v: number|null }] oldest first; from/to: the time window in ms. */
  function update(points, from, to) {
    draw(points, from, to);
    const widths = [...svg.querySelectorAll('[data-tick]')].map((t) => t.getBBox().width);
    const room = Math.max(PAD.left, Math.ceil(Math.max(0, ...widths)) + GAP + 2);
    if (widths.every((w) => w > 0) && Math.abs(room - left) > 1 && room < W / 2) {
      left = room;
      draw(points, from, to);
    }
  }

  function draw(points, from, to) {
    shown = points.filter((p) => p.v !== null && p.t >= from && p.t <= to);
    const top = Math.max(floorMax, ceiling ?? 0, ...shown.map((p) => p.v)) * 1.1;
    x = (t) => left + ((t - from) / Math.max(1, to - from)) * (W - left - PAD.right);
    y = (v) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
    const path = shown.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
    const last = shown[shown.length - 1];
    const labelMax = ceiling ?? top / 1.1;
    svg.setAttribute('data-points', String(shown.length));
    if (ceiling !== null) svg.setAttribute('data-ceiling', String(ceiling));
    svg.setAttribute('aria-label', `${title}: ${shown.length} points from ${fmtTime(from)} to ${fmtTime(to)}` +
      (last ? `, latest ${format(last.v)}` : ', no data in this window') + (ceiling !== null ? `; ${ceilingText} ${format(ceiling)}` : ''));
    const span = to - from;
    fill(
      svg,
      h('svg:line', { x1: left, x2: W - PAD.right, y1: y(0), y2: y(0), class: 'axis' }),
      h('svg:line', { x1: left, x2: W - PAD.right, y1: y(labelMax), y2: y(labelMax), class: ceiling !== null ? 'ceiling' : 'grid' }),
      h('svg:text', { x: left - GAP, y: y(0) + 4, class: 'tick end', 'data-tick': 'zero' }, format(0)),
      h('svg:text', { x: left - GAP, y: y(labelMax) + 4, class: 'tick end', 'data-tick': 'max' }, format(labelMax)),
      h('svg:text', { x: left, y: H - 5, class: 'tick', 'data-tick-time': 'from' }, fmtAxis(from, span)),
      h('svg:text', { x: W - PAD.right, y: H - 5, class: 'tick end', 'data-tick-time': 'to' }, fmtAxis(to, span)),
      shown.length ? h('svg:path', { d: path, class: 'line' }) : h('svg:text', { x: W / 2, y: H / 2, class: 'tick middle' }, 'No data in this window'),
      shown.length === 1 ? h('svg:circle', { cx: x(last.t), cy: y(last.v), r: 3, class: 'dot' }) : null,
    );
    if (at >= 0) point(Math.min(at, shown.length - 1));
  }

  /** Shows point `i`: a cursor line, a marker and the value with its time above the chart. */
  function point(i) {
    svg.querySelector('.hover')?.remove();
    if (i < 0 || !shown.length) return void hide();
    at = i;
    const p = shown[i];
    svg.append(h('svg:g', { class: 'hover' },
      h('svg:line', { x1: x(p.t), x2: x(p.t), y1: PAD.top, y2: H - PAD.bottom, class: 'cursor' }),
      h('svg:circle', { cx: x(p.t), cy: y(p.v), r: 4, class: 'marker' })));
    // The value sits in the chart's top corner (app.css .chart-tip), so it never leaves the box on a phone; the
    // cursor line shows which point it is.
    tip.textContent = `${format(p.v)} at ${fmtClock(p.t)}`;
    tip.hidden = false;
  }

  function hide() {
    at = -1;
    tip.hidden = true;
    svg.querySelector('.hover')?.remove();
  }

  function nearest(clientX) {
    const box = svg.getBoundingClientRect();
    const vx = ((clientX - box.left) / box.width) * W;
    let best = -1;
    for (let i = 0; i < shown.length; i++) if (best < 0 || Math.abs(x(shown[i].t) - vx) < Math.abs(x(shown[best].t) - vx)) best = i;
    return best;
  }

  svg.addEventListener('pointermove', (e) => point(nearest(e.clientX)));
  svg.addEventListener('pointerdown', (e) => point(nearest(e.clientX)));
  // A finger's pointer leaves as it lifts (Pointer Events: pointerleave follows pointerup for touch): keep its
  // point shown until focus moves on.
  svg.addEventListener('pointerleave', (e) => e.pointerType === 'mouse' && hide());
  svg.addEventListener('blur', hide);
  svg.addEventListener('keydown', (e) => {
    if (!shown.length || !['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) return;
    e.preventDefault();
    const from = at < 0 ? shown.length - 1 : at;
    const next = { ArrowLeft: from - 1, ArrowRight: from + 1, Home: 0, End: shown.length - 1 }[e.key];
    point(Math.max(0, Math.min(shown.length - 1, next)));
  });

  return { el: figure, update };
}
