// One server: its state, the power buttons its state allows, who is online with quick actions (players.js), live
// charts (metrics.js), the console (recent lines, live lines from …/console/stream, and a command input), its
// settings and player lists, its backups (backups.js), its alert rules (alerts.js), its activity log (activity.js), its
// schedules (schedules.js) and, for its owner, its members (members.js). On a server shared with the reader, only
// the sections and controls their permissions allow are shown (Server.access). Nothing is read on a timer: the
// server is read again when the account's events say it changed (live.js; docs/dashboard-budget.md).
import { api, follow } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';
import { fmtMiB, timeEl } from './format.js';
import { keepingFocus, powerButtons } from './actions.js';
import { stateBadge } from './servers.js';
import { catalog, planFigures, planName, versionName } from './catalog.js';
import { metricsSection } from './metrics.js';
import { playersSection } from './players.js';
import { backupsSection } from './backups.js';
import { alertsSection } from './alerts.js';
import { activitySection } from './activity.js';
import { settingsSection } from './settings.js';
import { playerListsSection } from './player-lists.js';
import { membersSection } from './members.js';
import { schedulesSection } from './schedules.js';
import { actorText } from './format.js';
import { showStreamNote, whenChanged } from './live.js';
import { addressFact, dnsNameSection, playerAddressFact } from './dns-name.js';
import { manageSection } from './server-manage.js';
import { crashesSection } from './crashes.js';
import { statusSection } from './server-status.js';
import { accessSection, missingPowerNote } from './member-access.js';
import { withoutClock } from './game-text.js';
import { goneView, isGone } from './gone.js';
import { sectionMenu } from './sections.js';
import { lineLevel } from './console-level.js';

const CONSOLE_KEEP = 1000;

export async function serverView(main, signal, id) {
  const [server, cat] = await Promise.all([api('GET', `/v1/servers/${id}`), catalog()]);
  const version = cat.version(server.version);
  const plan = cat.plan(server.plan);
  const heading = h('h1', {}, server.name);
  const facts = h('dl', { class: 'facts' });
  const outcome = h('div', { class: 'outcome' });
  const buttons = h('div');
  const current = { server }; // the latest read, for sections that ask before acting (backups)
  const may = (p) => server.access.permissions.includes(p);
  const lists = may('players') ? playerListsSection(server, { changed: () => players.refresh().catch(() => undefined) }) : null;
  const players = may('players') ? playersSection(server, signal, { listsChanged: () => lists.render().catch(() => undefined) }) : null;
  // A member removed (or the server deleted) while the page is open: its streams end at once and ask again to a 404.
  const gone = () => signal.aborted || goneView(main);
  const metrics = metricsSection(id, signal, { game: version?.game, plan, gone });
  // Rename, plan, idle stop, automatic backups (server-manage.js); the server-list preview (server-status.js).
  const manage = server.access.role === 'owner' ? manageSection(cat, server, (s) => show(s)) : null;
  const preview = statusSection(server, version?.game);
  const shared = server.access.role === 'member' ? accessSection(server) : null; // whose it is, what the reader may do
  const owner = server.access.role === 'owner';
  // The page's sections in menu order (sections.js, issue 38 §6): a new section is one entry here. The first is what
  // #/servers/srv_… shows (state, controls, who plays, how it runs); each other has its own address,
  // #/servers/srv_…/<key>. The file manager is a page of its own (files.js); a member without `files` is told there
  // why it is closed.
  const menu = sectionMenu(`#/servers/${id}`, [
    { key: 'overview', title: 'Overview', content: [shared, facts, buttons, outcome, preview?.el, players?.el, metrics.el] },
    { key: 'console', title: 'Console', content: [may('console') && consoleSection(id, signal, gone)] },
    { key: 'crashes', title: 'Crashes', content: [may('console') && crashesSection(server, signal)] },
    { key: 'players', title: 'Player lists', content: [lists?.el] },
    { key: 'settings', title: 'Settings', content: [owner && dnsNameSection(server, (s) => show(s)), may('settings') && settingsSection(server, { latest: () => current.server, signal })] },
    { key: 'backups', title: 'Backups', content: [may('backups') && backupsSection(server, signal, () => current.server)] },
    { key: 'schedules', title: 'Schedules', content: [schedulesSection(server, signal)] },
    { key: 'activity', title: 'Activity', content: [activitySection(server, signal)] },
    { key: 'alerts', title: 'Alerts', content: [may('alerts') && alertsSection(server, signal)] },
    { key: 'manage', title: 'Manage', content: [manage?.el] },
    { key: 'members', title: 'Members', content: [owner && membersSection(server)] },
    { key: 'files', title: 'Files', href: `#/servers/${id}/files` },
  ], { home: heading, label: 'Sections of this server', signal });
  fill(main, h('p', {}, h('a', { href: '#/servers' }, '← All servers')), heading, menu.nav, menu.panels);
  menu.show(location.hash, false);
  document.title = `${server.name} · Dashboard`;

  let shown = '';
  // No event says that a pending name got published (ServerDns.status), so while it is pending the server is read
  // again: 5 s later, then twice as long each time, at most a minute apart (docs/dashboard-budget.md).
  let dnsRetry;
  let dnsWaitMs = 5000;
  signal.addEventListener('abort', () => clearTimeout(dnsRetry), { once: true });
  const show = (s) => {
    current.server = s;
    players?.update(s);
    manage?.update(s);
    preview?.update(s);
    clearTimeout(dnsRetry);
    if (s.dns?.status === 'pending' && !signal.aborted) {
      dnsRetry = setTimeout(() => refresh().catch(() => undefined), dnsWaitMs);
      dnsWaitMs = Math.min(dnsWaitMs * 2, 60_000);
    } else dnsWaitMs = 5000;
    const key = JSON.stringify([s.name, s.state, s.address, s.dns, s.disk_used_mb, s.plan]);
    const plan = cat.plan(s.plan); // a new plan shows at once (server-manage.js)
    if (key === shown) return;
    shown = key;
    heading.textContent = s.name;
    if (s.state !== 'running') metrics.notRunning(); // the stream sends nothing then; do not show a stale "now"
    fill(facts,
      h('dt', {}, 'State'), h('dd', { id: 'server-state' }, stateBadge(s.state)),
      h('dt', {}, 'Address'), h('dd', {}, addressFact(s.address)),
      s.dns && [h('dt', {}, 'Players type'), h('dd', { id: 'server-dns' }, playerAddressFact(s))],
      h('dt', {}, 'Game'), h('dd', { id: 'server-game' }, versionName(cat, s.version)),
      h('dt', {}, 'Plan'), h('dd', { id: 'server-plan' }, plan ? `${plan.name}: ${planFigures(plan)}` : planName(cat, s.plan)),
      h('dt', {}, 'Disk'), h('dd', { id: 'server-disk' }, s.disk_used_mb === null ? 'not measured yet' : `${fmtMiB(s.disk_used_mb)} used${plan ? ` of ${fmtMiB(plan.disk_mb)}` : ''}`),
      h('dt', {}, 'Created'), h('dd', {}, timeEl(s.created_at)));
    const changed = () => refresh().catch((e) => announce(e.message, true));
    keepingFocus(buttons, () => fill(buttons, powerButtons(s, outcome, changed, signal, () => (location.hash = '#/servers')), missingPowerNote(s)));
  };
  async function refresh() {
    try {
      show(await api('GET', `/v1/servers/${id}`));
    } catch (e) {
      // Deleted, or no longer shared with the reader: said in place of the page, not a silent jump to the list.
      if (isGone(e)) {
        if (!signal.aborted) goneView(main);
      } else throw e;
    }
  }
  show(server);
  // Its state, name, plan and address change with server.* events; the disk with its quota.* warnings.
  whenChanged(signal, (e) => e.server_id === id && (e.type.startsWith('server.') || e.type.startsWith('quota.')), refresh, {
    delayMs: 300, fallbackMs: 30_000, failed: (e) => announce(e.message, true),
  });
  await metrics.start();
  return { within: (hash) => menu.show(hash) }; // a jump between sections is not a new page (app.js)
}

function consoleSection(id, signal, gone) {
  const log = h('div', { class: 'console', role: 'log', 'aria-label': 'Console output', tabindex: 0 });
  const error = h('div');
  const note = h('p', { class: 'muted', id: 'console-note', role: 'status', hidden: true });
  const input = h('input', { id: 'console-command', name: 'command', required: true, maxlength: 1000, autocomplete: 'off' });
  const form = h('form', { class: 'row console-form' }, field('Command', input), h('button', { type: 'submit' }, 'Send'));

  // Follow the tail unless the reader scrolled up; judged when they scroll, since a hidden section has no size.
  let following = true;
  log.addEventListener('scroll', () => (following = log.scrollHeight - log.scrollTop - log.clientHeight < 40));
  const add = (line) => {
    const by = line.stream === 'input' && line.actor ? h('span', { class: 'by' }, actorText(line.actor)) : null;
    // One clock per line, the page's (in the reader's zone): the game's own is left out (game-text.js).
    const text = withoutClock(line.text);
    const level = line.stream === 'input' ? null : lineLevel(text); // errors and warnings marked (console-level.js)
    log.append(h('div', { class: `line ${line.stream}${level ? ` level-${level}` : ''}` }, timeEl(line.at, true), by, h('span', { class: 'text' }, text)));
    while (log.childElementCount > CONSOLE_KEEP) log.firstElementChild.remove();
    if (following) log.scrollTop = log.scrollHeight;
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
    await follow(`/v1/servers/${id}/console/stream`, (e) => e.event === 'line' && add(JSON.parse(e.data)), signal, last,
      showStreamNote(note, 'New console lines'));
  })().catch((e) => (isGone(e) ? gone() : error.replaceChildren(errorBox(`The console stopped: ${e.message}`))));

  const section = h('section', { 'aria-labelledby': 'console-title' }, h('h2', { id: 'console-title' }, 'Console'), note, log, form, error);
  section.addEventListener('section-shown', () => following && (log.scrollTop = log.scrollHeight)); // sections.js
  return section;
}
