// A server's alert rules (…/alerts: create, see whether each is firing, delete), as plain API reads and writes, like
// any client's. Its events in words are the activity log (activity.js).
import { api, listAll } from './api.js';
import { h, fill, announce, errorBox, field, table } from './dom.js';
import { timeEl } from './format.js';
import { whenChanged } from './live.js';

const METRICS = [['tps', 'TPS'], ['cpu_percent', 'CPU (% of one core)'], ['ram_percent', 'RAM (% of the plan)'], ['players_online', 'Players online']];

export function alertsSection(server, signal) {
  const list = h('div');
  const outcome = h('div');
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    if (!failed) announce(text);
  };
  const kind = h('select', { id: 'alert-kind', name: 'kind' }, h('option', { value: 'metric' }, 'A metric'), h('option', { value: 'crash' }, 'Any crash'));
  const metricFields = h('div', { class: 'row' },
    field('Metric', h('select', { id: 'alert-metric', name: 'metric' }, METRICS.map(([v, t]) => h('option', { value: v }, t)))),
    field('Is', h('select', { id: 'alert-comparison', name: 'comparison' }, h('option', { value: 'below' }, 'below'), h('option', { value: 'above' }, 'above'))),
    field('Threshold', h('input', { id: 'alert-threshold', name: 'threshold', type: 'number', step: 'any', min: 0, required: true })),
    field('For (seconds)', h('input', { id: 'alert-duration', name: 'duration_seconds', type: 'number', min: 0, max: 86400, value: 60, required: true })));
  kind.addEventListener('change', () => {
    metricFields.hidden = kind.value !== 'metric';
    for (const input of metricFields.querySelectorAll('input')) input.required = kind.value === 'metric';
  });
  const form = h('form', { class: 'card', 'aria-labelledby': 'alert-new' },
    h('h3', { id: 'alert-new' }, 'New alert rule'),
    h('div', { class: 'row' }, field('Rule name (optional)', h('input', { id: 'alert-name', name: 'name', maxlength: 64, autocomplete: 'off' })), field('When', kind)),
    metricFields, h('button', { type: 'submit' }, 'Add rule'));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const rule = { kind: kind.value };
    if (data.get('name')) rule.name = String(data.get('name'));
    if (kind.value === 'metric') {
      Object.assign(rule, { metric: data.get('metric'), comparison: data.get('comparison'), threshold: Number(data.get('threshold')), duration_seconds: Number(data.get('duration_seconds')) });
    }
    try {
      const made = await api('POST', `/v1/servers/${server.id}/alerts`, rule);
      form.reset();
      kind.dispatchEvent(new Event('change'));
      say(`Added the rule ${describe(made)}.`);
      await refresh();
    } catch (e) {
      say(`Could not add the rule: ${e.message}`, true);
    }
  });

  const remove = (rule) => async () => {
    if (!confirm(`Delete the rule ${describe(rule)}?`)) return;
    try {
      await api('DELETE', `/v1/servers/${server.id}/alerts/${rule.id}`);
      say(`Deleted the rule ${describe(rule)}.`);
    } catch (e) {
      say(`Could not delete the rule: ${e.message}`, true);
    }
    await refresh().catch(() => undefined);
  };

  async function refresh() {
    const rules = await listAll(`/v1/servers/${server.id}/alerts`);
    fill(list, rules.length ? table(`Alert rules of ${server.name}`, ['Rule', 'State', 'Since', ''], rules.map((r) => [
      describe(r),
      h('span', { class: `badge alert-${r.state} alert-state` }, r.state),
      r.state_since ? timeEl(r.state_since) : '—',
      h('button', { type: 'button', class: 'danger', 'aria-label': `Delete the rule ${describe(r)}`, onclick: remove(r) }, 'Delete'),
    ]), (i) => ({ 'data-alert-id': rules[i].id }))
      : h('p', { class: 'muted' }, 'No alert rules.'));
  }
  // A rule's state changes with its alert.triggered and alert.resolved events: the list is read again then.
  whenChanged(signal, (e) => e.server_id === server.id && e.type.startsWith('alert.'), refresh, { fallbackMs: 120_000 });
  refresh().catch((e) => say(`Could not list the alert rules: ${e.message}`, true));

  return h('section', { 'aria-labelledby': 'alerts-title' },
    h('h2', { id: 'alerts-title' }, 'Alerts'),
    h('p', { class: 'muted' }, 'Each trigger and resolution is an event: it shows in the activity below and goes to your webhooks.'),
    form, outcome, list);
}

export function describe(rule) {
  const what = rule.kind === 'crash' ? 'any crash' : `${rule.metric} ${rule.comparison} ${rule.threshold} for ${rule.duration_seconds} s`;
  return rule.name ? `“${rule.name}” (${what})` : what;
}
