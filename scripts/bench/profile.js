'use strict';
/**
 * Summarizes a V8 .cpuprofile (written by `node --cpu-prof`): where the sampled time went.
 *
 * - self time per function: samples whose top frame is that function (timeDeltas summed), ms and % of the
 *   non-idle time;
 * - inclusive time per function: samples with that function anywhere on the stack (counted once per sample
 *   even under recursion), which is what "validation costs X% of a request" means;
 * - self time per area: the package (node_modules/<pkg>), our own file (dist/src/…), node internals, GC (the
 *   largest `top` as `by_area`, every one as `by_area_all`).
 */
const fs = require('node:fs');

function areaOf(url) {
  if (!url) return '(native/V8)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const own = /dist\/src\/(.*)\.js$/.exec(url);
  if (own) return `src/${own[1]}`;
  if (url.startsWith('node:')) return 'node (http, streams, …)';
  return url;
}

function summarize(file, top = 15) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n) => {
    const f = n.callFrame;
    const where = f.url ? `${areaOf(f.url)}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };

  const self = new Map();
  const inclusive = new Map();
  const area = new Map();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idle += ms;
      return;
    }
    total += ms;
    const k = keyOf(node);
    self.set(k, (self.get(k) ?? 0) + ms);
    const a = name === '(garbage collector)' ? '(garbage collector)' : name === '(program)' ? '(program)' : areaOf(node.callFrame.url);
    area.set(a, (area.get(a) ?? 0) + ms);
    const seen = new Set();
    for (let n = node; n; n = byId.get(parent.get(n.id))) {
      const key = keyOf(n);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  });
  const rank = (m, skip = () => false) =>
    [...m.entries()].filter(([k]) => !skip(k)).sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([name, ms]) => ({ name, ms: +ms.toFixed(1), pct: +((100 * ms) / total).toFixed(1) }));
  // Frames every request passes through (the event loop, the socket parser) say nothing; leave them out.
  const boring = (k) => /^\((root|program)\)|^processTicksAndRejections|^listOnTimeout|^processImmediate/.test(k);
  const byAreaAll = [...area.entries()].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms: +ms.toFixed(1) }));
  return { busy_ms: +total.toFixed(0), idle_ms: +idle.toFixed(0), by_area: rank(area), by_area_all: byAreaAll, top_self: rank(self), top_inclusive: rank(inclusive, boring) };
}

module.exports = { summarize };

if (require.main === module) console.log(JSON.stringify(summarize(process.argv[2], Number(process.argv[3] ?? 25)), null, 2));
