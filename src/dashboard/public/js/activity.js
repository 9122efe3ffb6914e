// A server's activity log (issue 38 §4): its events (GET /v1/events?server_id=…&order=desc, newest first, then the
// account's live events of the server as they come: live.js), each said as a sentence naming who did it ("Alex was
// banned by sam@example.com", "The schedule Nightly restarted the server"), never as its type name; a filter by
// kind. A kind is a set of event types, and listEvents filters by one `type`, so a kind is read as one page per
// type, newest first, merged (docs/dashboard-budget.md). Every EventType of openapi/v1.yaml has its sentence here.
import { api, listAll } from './api.js';
import { h, fill, errorBox } from './dom.js';
import { fmtTime, timeEl } from './format.js';
import { onEvent, whenChanged } from './live.js';

const SHOWN = 30; // the newest events shown

const isRestore = (e) => e.type.startsWith('action.') && e.data?.action?.type === 'restore';

/** The filter's kinds: the event types each reads, and which of their events it keeps (a restore is a backup's). */
export const KINDS = [
  { id: 'all', label: 'All', types: null },
  { id: 'players', label: 'Players', types: ['player.joined', 'player.left', 'player_list.changed'] },
  { id: 'settings', label: 'Settings', types: ['settings.changed'] },
  { id: 'backups', label: 'Backups', types: ['backup.created', 'backup.ready', 'backup.failed', 'backup.deleted', 'action.succeeded', 'action.failed'], keep: (e) => !e.type.startsWith('action.') || isRestore(e) },
  { id: 'power', label: 'Power', types: ['action.succeeded', 'action.failed', 'server.state_changed', 'server.crashed', 'quota.disk_warning', 'quota.disk_exceeded'], keep: (e) => !isRestore(e) },
  { id: 'members', label: 'Members', types: ['member.added', 'member.updated', 'member.removed'] },
  { id: 'schedules', label: 'Schedules', types: ['schedule.ran', 'schedule.failed', 'schedule.disabled'] },
];

/** Whether kind `k` shows event `e`. */
export const shows = (k, e) => k.types === null || (k.types.includes(e.type) && (k.keep?.(e) ?? true));

/** Why the service acted, by its actor's cause (openapi/v1.yaml ServiceCause), in words. */
const WHY = {
  backup_schedule: 'its backup schedule',
  crash_restart: 'restarting it after a crash',
  idle_stop: 'nobody was online',
  disk_quota: 'over its disk',
  reconcile: 'keeping it as it was asked to be',
  boot: 'the service was starting',
  shutdown: 'the service was shutting down',
  node: 'its machine stopped or started answering',
  alerts: 'an alert rule',
  webhooks: 'a webhook kept failing',
  operator: "the operator's command line",
};

/**
 * Who did it, in words: `name` as a sentence's subject (lowercase; cap() starts a sentence with it) and `why`, the
 * service's reason. A token id is shown only to its own account, so an actor that carries one is the reader
 * ("you"); `names` maps other accounts' ids to emails (a server's owner knows its members) and schedules' ids to names.
 */
export function who(actor, names = new Map()) {
  if (!actor) return { name: 'someone' };
  if (actor.type === 'user') return { name: actor.token_id ? 'you' : (names.get(actor.user_id) ?? 'another account') };
  if (actor.type !== 'service') return { name: 'someone' };
  if (actor.cause === 'schedule') return { name: names.get(actor.schedule_id) ?? 'a schedule' };
  if (actor.cause === 'game') return { name: 'the game' };
  if (actor.cause === 'unknown') return { name: 'someone' };
  return { name: 'the service', why: WHY[actor.cause] ?? actor.cause.replace(/_/g, ' ') };
}

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const because = (w) => (w.why ? `: ${w.why}` : '');
/** "Sam restarted the server" */
const did = (w, what) => `${cap(w.name)} ${what}${because(w)}`;
/** "Alex was banned by sam@example.com" */
const done = (what, w) => `${what} by ${w.name}${because(w)}`;

const LIST_CHANGES = {
  bans: { added: (n) => `${n} was banned`, removed: (n) => `${n} was unbanned` },
  whitelist: { added: (n) => `${n} was added to the whitelist`, removed: (n) => `${n} was taken off the whitelist` },
  operators: { added: (n) => `${n} was made an operator`, removed: (n) => `${n}'s operator rights were taken away` },
};

const POWER = { start: 'started the server', stop: 'stopped the server', restart: 'restarted the server', kill: 'forced the server to stop' };
const STATES = { running: 'is running', stopped: 'stopped', starting: 'is starting', stopping: 'is stopping', crashed: 'crashed', installing: 'is being installed' };
const LEFT = { left: 'left', crash: 'left: the server crashed', shutdown: 'left: the server stopped', unreachable: 'left: the server could not be reached' };

function actionSentence(e, w) {
  const a = e.data.action;
  const failed = e.type === 'action.failed';
  const why = a.error ? `: ${a.error.detail}` : '';
  if (a.type === 'restore') return failed ? `A restore of a backup, asked for by ${w.name}, failed${why}` : did(w, 'restored a backup into the server');
  if (failed) return `${cap(w.name)} tried to ${POWER[a.type] ? `${a.type} the server` : `do “${a.type}”`}, which failed${why}`;
  return did(w, POWER[a.type] ?? `did “${a.type}” to the server`);
}

const alertName = (a) => (a.name ? `“${a.name}”` : a.kind === 'crash' ? 'on any crash' : `on ${a.metric.replace(/_/g, ' ')}`);
const backupName = (b) => (b.name ? `“${b.name}”` : b.automatic ? 'An automatic backup' : 'A backup');

/** One sentence for an event, from its type, data and actor (openapi/v1.yaml: the Event schemas). */
export function sentence(e, names = new Map()) {
  const d = e.data ?? {};
  const w = who(e.actor, names);
  switch (e.type) {
    case 'server.created': return did(w, 'created the server');
    case 'server.updated': return did(w, 'changed the server');
    case 'server.deleted': return did(w, 'deleted the server');
    case 'server.recovered': return `The operator recovered the server on another machine${d.backup_created_at
      ? `, from its backup of ${fmtTime(d.backup_created_at)}: what changed after it is lost` : ', with no backup: its files are new'}`;
    // The service's own stops and starts name it (an action names a person's); the rest is what the server did.
    case 'server.state_changed': return w.why && (d.to === 'stopped' || d.to === 'starting')
      ? did(w, d.to === 'stopped' ? 'stopped the server' : 'started the server')
      : `The server ${STATES[d.to] ?? `is ${d.to}`}`;
    case 'server.crashed': return `The server crashed${d.crash?.reason ? `: ${d.crash.reason.replace(/_/g, ' ')}` : ''}`;
    case 'action.succeeded':
    case 'action.failed': return actionSentence(e, w);
    case 'player.joined': return `${d.player.name} joined`;
    // A kick's player.left acts as whoever kicked (the game's own report otherwise).
    case 'player.left': return d.reason === 'kick'
      ? (e.actor?.type === 'user' ? done(`${d.player.name} was kicked`, w) : `${d.player.name} was kicked`)
      : `${d.player.name} ${LEFT[d.reason] ?? `left (${d.reason})`}`;
    case 'player_list.changed': {
      if (d.change === 'enabled' || d.change === 'disabled') return done(`The ${d.list} was turned ${d.change === 'enabled' ? 'on' : 'off'}`, w);
      const say = LIST_CHANGES[d.list]?.[d.change];
      return done(say ? say(d.entry.name) : `${d.entry?.name ?? 'A name'} was ${d.change} (${d.list})`, w);
    }
    case 'settings.changed': {
      const shown = d.changed.map((name) => (name in d.values ? `${name} to ${JSON.stringify(d.values[name])}` : name));
      return did(w, `changed ${shown.length === 1 ? 'the setting' : 'the settings'} ${shown.join(', ')}`);
    }
    case 'backup.created': return did(w, `began a backup${d.backup.name ? ` “${d.backup.name}”` : ''}`);
    case 'backup.ready': return `${backupName(d.backup)} is ready`;
    case 'backup.failed': return `${backupName(d.backup)} failed${d.backup.error ? `: ${d.backup.error}` : ''}`;
    case 'backup.deleted': return did(w, `deleted the backup ${d.backup.name ? `“${d.backup.name}”` : d.backup.id}`);
    case 'quota.disk_warning': return 'The server is close to its disk limit';
    case 'quota.disk_exceeded': return 'The server went over its disk limit';
    case 'alert.triggered': return `The alert ${alertName(d.alert)} fired${d.value !== null && d.value !== undefined ? ` at ${d.value}` : ''}`;
    case 'alert.resolved': return `The alert ${alertName(d.alert)} is resolved`;
    case 'schedule.ran': return d.run.status === 'skipped'
      ? `The schedule ${d.schedule.name} was skipped${d.run.detail ? `: ${d.run.detail}` : ''}`
      : `The schedule ${d.schedule.name} ran`;
    case 'schedule.failed': return `The schedule ${d.schedule.name} failed${d.run.detail ? `: ${d.run.detail}` : ''}`;
    case 'schedule.disabled': return `The service turned off the schedule ${d.schedule.name}${d.schedule.disabled_reason ? `: ${d.schedule.disabled_reason.replace(/_/g, ' ')}` : ''}`;
    case 'member.added': return done(`The server was shared with ${d.member.email}`, w);
    case 'member.updated': return done(`The permissions of ${d.member.email} were changed`, w);
    case 'member.removed': return done(`${d.member.email} was removed from the server`, w);
    case 'token.created': return did(w, 'made an API token');
    case 'token.revoked': return did(w, 'revoked an API token');
    case 'webhook.disabled': return 'A webhook was turned off: it kept failing';
    case 'webhook.test': return did(w, 'sent a test to a webhook');
    default: return 'Something happened that this page cannot describe yet'; // an event type added later (OtherEvent)
  }
}

/** Whom the events name: the members by email and the schedules by name, as far as the reader may know them. */
async function namesOf(server) {
  const [members, schedules] = await Promise.all([
    server.access.role === 'owner' ? listAll(`/v1/servers/${server.id}/members`) : [],
    listAll(`/v1/servers/${server.id}/schedules`),
  ]);
  return new Map([...members.filter((m) => m.user_id).map((m) => [m.user_id, m.email]), ...schedules.map((s) => [s.id, `the schedule ${s.name}`])]);
}

/** Newest first: ids are ordered by time within a reader's events (src/ids.ts), and times first across pages. */
const newestFirst = (a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);

/** The server page's activity log: a filter by kind, and the newest events of that kind, each in words. */
export function activitySection(server, signal) {
  const list = h('ol', { class: 'timeline', id: 'timeline' });
  const error = h('div');
  const select = h('select', { id: 'activity-kind', name: 'kind', 'aria-controls': 'timeline' }, KINDS.map((k) => h('option', { value: k.id }, k.label)));
  let kind = KINDS[0];
  let known = new Map();
  let shown = []; // the events listed, newest first
  let fresh = []; // the stream's events since the last read began, newest first: newer than what it answers
  const item = (e) => h('li', { 'data-event-type': e.type }, timeEl(e.created_at), ' ', h('span', { class: 'what' }, sentence(e, known)));
  const draw = () => fill(list, shown.length ? shown.map(item) : h('li', { class: 'muted' }, kind.types ? `Nothing of this kind yet.` : 'Nothing yet.'));

  async function read(k) {
    const base = `/v1/events?server_id=${server.id}&order=desc&limit=${SHOWN}`;
    if (k.types === null) return (await api('GET', base)).data;
    const pages = await Promise.all(k.types.map((type) => api('GET', `${base}&type=${type}`)));
    return pages.flatMap((p) => p.data).filter((e) => shows(k, e)).sort(newestFirst);
  }
  let reading = 0; // a newer read (another kind chosen meanwhile) wins
  async function refresh() {
    const mine = ++reading;
    const k = kind;
    fresh = [];
    const [events, names] = await Promise.all([read(k), known.size ? known : namesOf(server)]);
    if (mine !== reading) return;
    known = names;
    error.replaceChildren();
    const got = new Set(events.map((e) => e.id));
    shown = [...fresh.filter((e) => !got.has(e.id) && shows(k, e)), ...events].slice(0, SHOWN);
    draw();
  }
  const failed = (e) => error.replaceChildren(errorBox(`Could not load the activity: ${e.message}`));
  select.addEventListener('change', () => {
    kind = KINDS.find((k) => k.id === select.value) ?? KINDS[0];
    shown = shown.filter((e) => shows(kind, e)); // at once, then what the API has of this kind
    draw();
    refresh().catch(failed);
  });
  // The live events are drawn as they come; a read is needed only when they were interrupted (the fallback).
  onEvent((e) => {
    if (e.server_id !== server.id) return;
    fresh = [e, ...fresh].slice(0, SHOWN);
    if (!shows(kind, e)) return;
    shown = [e, ...shown.filter((x) => x.id !== e.id)].slice(0, SHOWN); // in the stream's order (the events' seq)
    draw();
  }, signal);
  whenChanged(signal, () => false, refresh, { fallbackMs: 120_000 });
  refresh().catch(failed);
  return h('section', { 'aria-labelledby': 'timeline-title', class: 'activity' },
    h('h2', { id: 'timeline-title' }, 'Activity'),
    h('div', { class: 'field' }, h('label', { for: 'activity-kind' }, 'Kind of activity'), select),
    error, list);
}
