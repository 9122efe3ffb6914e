// A server's settings, built from the software's own definitions (GET /v1/versions/{id}: each setting's JSON
// Schema), so new software needs no dashboard change. Each field shows the schema's title (else its name in
// words) and description, and its limit beside it: the schema's bounds, or the plan's figure for a plan-bounded
// setting (SettingDefinition.plan_limit). A refused change puts each problem at its field (RFC 9457 `errors`
// pointers). Creation-only settings are shown, with why they cannot change here; the create form offers them.
import { api } from './api.js';
import { h, fill, announce, errorBox, field, showFieldErrors } from './dom.js';
import { catalog, versionDetail } from './catalog.js';
import { plural } from './format.js';
import { fieldsMarked, sayAs } from './problems.js';
import { valueName } from './game-text.js';
import { offerRestart } from './restart-offer.js';
import { whenChanged } from './live.js';

/** Words people use for setting names without a schema `title` (JSON Schema draft-07 §10.1). */
const WORDS = { motd: 'MOTD', pvp: 'PvP', gamemode: 'Game mode' };

export function settingTitle(d) {
  if (typeof d.schema.title === 'string' && d.schema.title) return d.schema.title;
  const words = d.name.split('_').map((w) => WORDS[w] ?? w);
  const text = words.join(' ');
  return text[0].toUpperCase() + text.slice(1);
}

/** The limit beside a field, in words: the plan's figure for a plan-bounded setting, else the schema's bounds. */
export function settingLimit(d, plan) {
  const s = d.schema;
  if (d.plan_limit === 'player_slots' && plan) {
    const most = typeof s.maximum === 'number' ? Math.min(s.maximum, plan.player_slots) : plan.player_slots;
    return `${s.minimum ?? 0} to ${most}: your plan ${plan.name} has ${plural(plan.player_slots, 'player slot')}`;
  }
  if (s.type === 'integer' || s.type === 'number') {
    if (typeof s.minimum === 'number' && typeof s.maximum === 'number') return `${s.minimum} to ${s.maximum}`;
    if (typeof s.minimum === 'number') return `At least ${s.minimum}`;
    if (typeof s.maximum === 'number') return `At most ${s.maximum}`;
  }
  if (s.type === 'string' && !Array.isArray(s.enum) && typeof s.maxLength === 'number') {
    return `${s.minLength ?? 0} to ${s.maxLength} characters`;
  }
  return null;
}

/**
 * One setting's labelled control. `prefix` keeps ids apart when two forms show the same setting. The creation-only
 * ones are disabled unless `creating`, with the reason beside them. read() gives the value as the API takes it.
 */
export function settingField(d, value, plan, { prefix = 'setting', creating = false } = {}) {
  const s = d.schema;
  const locked = d.creation_only && !creating;
  const common = { id: `${prefix}-${d.name}`, name: d.name, disabled: locked };
  let control;
  if (Array.isArray(s.enum)) {
    control = h('select', common, s.enum.map((v) => h('option', { value: String(v), selected: v === value }, valueName(v))));
  } else if (s.type === 'boolean') {
    control = h('input', { ...common, type: 'checkbox', checked: value === true });
  } else if (s.type === 'integer' || s.type === 'number') {
    const max = d.plan_limit === 'player_slots' && plan ? Math.min(s.maximum ?? Infinity, plan.player_slots) : s.maximum;
    control = h('input', { ...common, type: 'number', value: value === undefined || value === null ? '' : String(value), min: s.minimum, max: Number.isFinite(max) ? max : undefined, step: s.type === 'integer' ? 1 : 'any', placeholder: s.default !== undefined ? undefined : creating ? 'picked at random' : locked ? 'picked by the game' : undefined });
  } else {
    control = h('input', { ...common, type: 'text', value: String(value ?? ''), maxlength: s.maxLength ?? 1000 });
  }
  // A seed left out at create is picked by the service and shown (`random_at_create`); only servers created before
  // that have none stored: their game picked it at its first start, and its console says which (issue 38 §2).
  const picked = locked && (value === undefined || value === null);
  const notes = [s.description, locked ? (picked ? 'Left to the game when the server was created: it picked one at its first start, and its console says which. It cannot change now.' : 'Chosen when the server was created; it cannot change now.') : null].filter(Boolean).join(' ');
  sayAs(control, { label: settingTitle(d) }); // a refusal names the setting, not its label's note (problems.js)
  const title = settingTitle(d) + (d.restart_required && !creating && !d.creation_only ? ' (applies at the next start)' : '');
  return { el: field(title, control, { help: notes, limit: settingLimit(d, plan) }), control, read: () => read(d, control) };
}

function read(d, el) {
  const s = d.schema;
  if (s.type === 'boolean') return el.checked;
  if (Array.isArray(s.enum)) return s.enum.find((v) => String(v) === el.value);
  if (s.type === 'integer' || s.type === 'number') return el.value === '' ? null : Number(el.value);
  return el.value;
}

/**
 * `latest()` gives the server as last read and `signal` ends with the page: with both, what waits for a restart
 * (ServerSettings.restart_pending) is offered a "Restart now" (restart-offer.js), looked at again when the server's
 * state changes while something waits.
 */
export function settingsSection(server, { latest = () => server, signal = null } = {}) {
  const body = h('div');
  const outcome = h('div', { class: 'outcome' });
  const offer = h('div');
  (async () => {
    const [version, current, cat] = await Promise.all([versionDetail(server.version), api('GET', `/v1/servers/${server.id}/settings`), catalog()]);
    if (!version.settings.length) return fill(body, h('p', { class: 'muted' }, 'This software has no settings.'));
    const titles = (names) => names.map((n) => settingTitle(version.settings.find((d) => d.name === n) ?? { name: n, schema: {} }));
    let pending = current.restart_pending;
    const showPending = () => signal && offerRestart(offer, titles(pending), latest, signal, () => (pending = []));
    showPending();
    if (signal) {
      whenChanged(signal, (e) => pending.length > 0 && e.server_id === server.id && e.type === 'server.state_changed', async () => {
        if (!pending.length) return; // the slow reads while events are down (live.js) cost nothing then
        pending = (await api('GET', `/v1/servers/${server.id}/settings`)).restart_pending;
        showPending();
      }, { fallbackMs: 120_000 });
    }
    const plan = cat.plan(server.plan);
    const fields = version.settings.map((d) => [d, settingField(d, current.values[d.name], plan)]);
    const controls = new Map(fields.map(([d, f]) => [`/body/${d.name}`, f.control]));
    const form = h('form', { class: 'settings', novalidate: true }, fields.map(([, f]) => f.el), h('button', { type: 'submit' }, 'Save settings'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const changes = {};
      for (const [d, f] of fields) {
        const value = f.read();
        if (!d.creation_only && value !== current.values[d.name]) changes[d.name] = value;
      }
      showFieldErrors(form, controls, []);
      if (!Object.keys(changes).length) return void outcome.replaceChildren(h('span', {}, 'Nothing changed.'));
      try {
        const saved = await api('PATCH', `/v1/servers/${server.id}/settings`, changes);
        Object.assign(current.values, saved.values);
        const waiting = titles(saved.restart_pending);
        const text = `Settings saved.${waiting.length ? ` ${waiting.join(', ')} ${waiting.length === 1 ? 'applies' : 'apply'} at the next start.` : ''}`;
        outcome.replaceChildren(h('span', {}, text));
        announce(text);
        pending = saved.restart_pending;
        showPending();
      } catch (e) {
        const left = showFieldErrors(form, controls, e.problem?.errors ?? []);
        const n = left.length ? 0 : fieldsMarked(form); // one per setting, however many rules its value broke
        const text = n ? `Not saved: ${plural(n, 'setting')} ${n === 1 ? 'needs' : 'need'} a change, shown at ${n === 1 ? 'its field' : 'their fields'}.` : `Not saved: ${e.message}`;
        outcome.replaceChildren(errorBox(text));
      }
    });
    fill(body, form);
  })().catch((e) => outcome.replaceChildren(errorBox(`Could not load the settings: ${e.message}`)));
  return h('section', { 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings'), body, outcome, offer);
}
