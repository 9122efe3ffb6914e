// Settings → Webhooks, through /v1/webhooks: create one (its signing secret is shown once), switch it on or off,
// send a test event, see its recent deliveries, delete it. The same rules as for any API client: https only and
// no private addresses unless the operator allows them (the service answers 400 with the reason).
import { api, listAll } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, table } from './dom.js';
import { timeEl } from './format.js';

/** The spec's EventType values, by group (openapi/v1.yaml EventType). */
const EVENT_GROUPS = [
  ['Servers', ['server.created', 'server.updated', 'server.deleted', 'server.state_changed', 'server.crashed']],
  ['Actions', ['action.succeeded', 'action.failed']],
  ['Players', ['player.joined', 'player.left']],
  ['Alerts', ['alert.triggered', 'alert.resolved']],
  ['Backups', ['backup.created', 'backup.ready', 'backup.failed', 'backup.deleted']],
  ['Disk', ['quota.disk_warning', 'quota.disk_exceeded']],
  ['Schedules', ['schedule.ran', 'schedule.failed']],
  ['Account', ['token.created', 'token.revoked', 'webhook.disabled']],
];
const DEFAULT = new Set(['server.state_changed', 'server.crashed', 'action.failed', 'alert.triggered', 'alert.resolved']);

export async function webhooksView(main) {
  const listBox = h('div');
  const reveal = h('div');
  const outcome = h('div');
  fill(main,
    h('h1', {}, 'Webhooks'),
    h('p', { class: 'muted' }, 'Each event you pick is POSTed to your URL, signed as the Standard Webhooks specification defines (webhook-id, webhook-timestamp, webhook-signature). See the API docs, tag Webhooks.'),
    createForm(reveal, () => refresh()),
    reveal,
    h('section', { 'aria-labelledby': 'webhook-list' }, h('h2', { id: 'webhook-list' }, 'Your webhooks'), outcome, listBox));

  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    if (!failed) announce(text);
  };
  const act = (fn) => busyWhile(fn, (message) => say(message, true));

  async function refresh() {
    const hooks = await listAll('/v1/webhooks');
    fill(listBox, hooks.length ? hooks.map((w) => card(w)) : h('p', { class: 'muted' }, 'No webhooks.'));
  }

  function card(w) {
    const deliveries = h('div', { class: 'deliveries' });
    const showDeliveries = async () => {
      const page = await api('GET', `/v1/webhooks/${w.id}/deliveries?limit=10`);
      fill(deliveries, page.data.length ? h('div', {},
        table(`Recent deliveries to ${w.url}`, ['Event', 'Status', 'Attempts', 'Answer', 'Took', 'Next try'], page.data.map((d) => [
          d.event_type,
          h('span', { class: 'delivery-status' }, d.status),
          String(d.attempts),
          d.response_status ?? (d.error ? `error: ${d.error}` : '—'),
          d.duration_ms === null ? '—' : `${d.duration_ms} ms`,
          d.next_attempt_at ? timeEl(d.next_attempt_at) : '—',
        ]), (i) => ({ 'data-delivery-id': page.data[i].id })))
        : h('p', { class: 'muted' }, 'No deliveries yet.'));
    };
    const toggle = act(async () => {
      await api('PATCH', `/v1/webhooks/${w.id}`, { enabled: !w.enabled });
      say(`${w.enabled ? 'Disabled' : 'Enabled'} ${w.url}.`);
      await refresh();
    });
    const test = act(async () => {
      await api('POST', `/v1/webhooks/${w.id}/test`);
      say(`Sent a webhook.test event to ${w.url}.`);
      await showDeliveries();
    });
    const remove = act(async () => {
      if (!confirm(`Delete the webhook to ${w.url}? No more events are sent to it.`)) return;
      await api('DELETE', `/v1/webhooks/${w.id}`);
      say(`Deleted the webhook to ${w.url}.`);
      await refresh();
    });
    return h('article', { class: 'card', 'data-webhook-id': w.id },
      h('h3', {}, w.url, ' ', h('span', { class: `badge alert-${w.enabled ? 'ok' : 'firing'}` }, w.enabled ? 'enabled' : 'disabled')),
      w.disabled_reason ? h('p', { class: 'error' }, w.disabled_reason) : null,
      h('p', { class: 'muted' }, `Events: ${w.event_types.join(', ')} · created `, timeEl(w.created_at)),
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: test, 'aria-label': `Send test event to ${w.url}` }, 'Send test'),
        h('button', { type: 'button', onclick: act(showDeliveries), 'aria-label': `Deliveries to ${w.url}` }, 'Deliveries'),
        h('button', { type: 'button', onclick: toggle, 'aria-label': `${w.enabled ? 'Disable' : 'Enable'} the webhook to ${w.url}` }, w.enabled ? 'Disable' : 'Enable'),
        h('button', { type: 'button', class: 'danger', onclick: remove, 'aria-label': `Delete the webhook to ${w.url}` }, 'Delete')),
      deliveries);
  }
  await refresh();
}

function createForm(reveal, created) {
  const error = h('div');
  const form = h('form', { class: 'card', 'aria-labelledby': 'create-webhook' },
    h('h2', { id: 'create-webhook' }, 'Create a webhook'),
    field('URL', h('input', { id: 'webhook-url', name: 'url', type: 'url', required: true, maxlength: 2000, placeholder: 'https://example.com/hooks/gsh' })),
    EVENT_GROUPS.map(([group, types]) => h('fieldset', {}, h('legend', {}, group),
      types.map((type) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'event_types', value: type, checked: DEFAULT.has(type) }), ` ${type} `)))),
    h('button', { type: 'submit' }, 'Create webhook'),
    error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const types = data.getAll('event_types');
    error.replaceChildren();
    if (!types.length) return void error.replaceChildren(errorBox('Pick at least one event type.'));
    try {
      const hook = await api('POST', '/v1/webhooks', { url: String(data.get('url')), event_types: types });
      form.reset();
      showOnce(reveal, hook);
      await created();
    } catch (e) {
      error.replaceChildren(errorBox(`Could not create the webhook: ${e.message}`));
    }
  });
  return form;
}

/** The signing secret, shown once: it lives only in this element until "Done" removes it. */
function showOnce(reveal, hook) {
  const box = h('section', { class: 'card reveal', 'aria-labelledby': 'new-webhook-title' },
    h('h2', { id: 'new-webhook-title', tabindex: -1 }, `New webhook to ${hook.url}`),
    h('p', {}, h('strong', {}, 'Copy its signing secret now: it is shown only this once.')),
    h('p', {}, h('code', { id: 'new-webhook-secret', class: 'secret' }, hook.secret)),
    h('button', { type: 'button', onclick: () => reveal.replaceChildren() }, 'Done'));
  fill(reveal, box);
  box.querySelector('h2').focus();
}
