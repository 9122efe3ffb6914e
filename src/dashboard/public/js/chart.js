// A line chart drawn as inline SVG: no charting library, so the page stays small and loads nothing else.
// The SVG is role="img" with a label that says what it shows in words; the numbers are also in the "Now" list.
import { h, fill, fmtClock } from './dom.js';

const W = 600;
const H = 150;
const PAD = { left: 56, right: 8, top: 10, bottom: 22 };

/**
 * `title` names the chart, `format` renders a value with its unit, `floorMax` is the least the y axis shows
 * (so 20 TPS fills the chart and a flat line near zero is not magnified into noise).
 */
export function lineChart({ title, format, floorMax }) {
  const svg = h('svg:svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart', 'data-points': 0 });
  const figure = h('figure', { class: 'chart-box' }, h('figcaption', {}, title), svg);

  /** points: [{ t: ms, v: number|null }] oldest first; from/to: the time window in ms. */
  function update(points, from, to) {
    const shown = points.filter((p) => p.v !== null && p.t >= from);
    const max = Math.max(floorMax, ...shown.map((p) => p.v)) * 1.1;
    const x = (t) => PAD.left + ((t - from) / Math.max(1, to - from)) * (W - PAD.left - PAD.right);
    const y = (v) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
    const path = shown.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
    const last = shown[shown.length - 1];
    svg.setAttribute('data-points', String(shown.length));
    svg.setAttribute(
      'aria-label',
      `${title}: ${shown.length} points from ${fmtClock(from)} to ${fmtClock(to)}` +
        (last ? `, latest ${format(last.v)}` : ', no data in this range'),
    );
    fill(
      svg,
      h('svg:line', { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: 'axis' }),
      h('svg:line', { x1: PAD.left, x2: W - PAD.right, y1: y(max / 1.1), y2: y(max / 1.1), class: 'grid' }),
      h('svg:text', { x: PAD.left - 6, y: y(0) + 4, class: 'tick end' }, format(0)),
      h('svg:text', { x: PAD.left - 6, y: y(max / 1.1) + 4, class: 'tick end' }, format(max / 1.1)),
      h('svg:text', { x: PAD.left, y: H - 4, class: 'tick' }, fmtClock(from)),
      h('svg:text', { x: W - PAD.right, y: H - 4, class: 'tick end' }, fmtClock(to)),
      shown.length ? h('svg:path', { d: path, class: 'line' }) : h('svg:text', { x: W / 2, y: H / 2, class: 'tick middle' }, 'No data yet'),
      shown.length === 1 ? h('svg:circle', { cx: x(last.t), cy: y(last.v), r: 3, class: 'dot' }) : null,
    );
  }

  return { el: figure, update };
}
