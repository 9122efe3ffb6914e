// On a server shared with the reader (Server.access.role `member`): who owns it (ServerAccess.owner_email) and what
// the reader may do there, each permission in words as visible text (a touch screen has no hover for a `title`),
// and, where a control is missing for want of a permission, why and whom to ask (issue 38 §3).
import { h } from './dom.js';
import { PERMISSIONS } from './members.js';

const ownerOf = (server) => server.access.owner_email ?? 'its owner';

/** What each permission (MemberPermission) lets a member do, as the end of a sentence. */
const DOES = {
  console: 'read the console and send commands',
  power: 'start, stop, restart and kill the server',
  settings: 'change its game settings',
  players: 'see who is online, kick players and keep the player lists',
  backups: 'make, download and restore backups',
  alerts: 'set its alert rules',
  files: 'browse, upload, edit and delete its files',
};

/** "Shared with you by alice@example.com." with the permissions held and not held, in words. */
export function accessSection(server) {
  const held = server.access.permissions;
  const owner = ownerOf(server);
  const item = ([name, title, what]) => {
    const has = held.includes(name);
    const help = DOES[name] ?? what;
    return h('li', { 'data-permission': name, 'data-held': String(has) },
      h('span', { class: has ? 'held' : 'not-held' }, has ? `✓ ${title}` : `✗ ${title}`), ': ',
      has ? `you may ${help}.` : `not given: ask ${owner} for it to ${help}.`);
  };
  return h('section', { 'aria-labelledby': 'access-title', id: 'member-access' },
    h('h2', { id: 'access-title' }, 'Your access'),
    h('p', { id: 'shared-note' }, 'Shared with you by ', h('strong', { id: 'server-owner' }, owner),
      '. Every member may see the server, its metrics, its schedules and its activity.'),
    h('ul', { class: 'access-list' }, PERMISSIONS.map(item)));
}

/** What the power buttons would do in this state, for the sentence that says why they are missing. */
function powerVerb(state) {
  if (state === 'stopped' || state === 'crashed') return 'start it';
  if (state === 'running') return 'stop or restart it';
  return 'start or stop it';
}

/** Beside the (missing) power buttons of a member without `power`; null when they hold it. */
export function missingPowerNote(server) {
  if (server.access.role !== 'member' || server.access.permissions.includes('power')) return null;
  return h('p', { class: 'missing-note', id: 'missing-power' }, `Ask ${ownerOf(server)} for the power permission to ${powerVerb(server.state)}.`);
}
