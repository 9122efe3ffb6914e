// A server's name in DNS (issue 43; openapi/v1.yaml DnsName, ServerDns and ServerList.dns_zone; README "DNS
// names"): the "Name players type" field of the create form and of the server page, refusals in words (taken,
// kept by the operator, not a name), and on the server page the address players type with a copy button and
// whether the DNS server has it yet. Where the service publishes no names, none of it is shown.
import { api } from './api.js';
import { h, fill, announce, errorBox, field, showFieldErrors } from './dom.js';
import { sayAs } from './problems.js';

/**
 * The zone names go into, as the servers list said it (ServerList.dns_zone): undefined until a list was read in
 * this document, null when the service publishes no names. Learnt from the list the create form sits under, so
 * the form needs no request of its own.
 */
let knownZone;

/** Keeps the list's `dns_zone` for the pages after it; returns it. */
export function learnZone(zone) {
  knownZone = zone ?? null;
  return knownZone;
}

/**
 * The zone for a server's page: from its own name when it has one (`dns.name` is `<dns_name>.<zone>`), else as the
 * list said it, else one read of the list's first entry (a server page opened from a link, before any list).
 */
export async function zoneFor(server) {
  if (server.dns && server.dns_name) return server.dns.name.slice(server.dns_name.length + 1);
  if (knownZone === undefined) learnZone((await api('GET', '/v1/servers?limit=1')).dns_zone);
  return knownZone;
}

/**
 * What players type: the name alone for Minecraft (its clients look up the SRV record `_minecraft._tcp.<name>`,
 * which carries the port), the name and the port for Luanti (UDP: its clients take a host and a port). Null
 * without a name.
 */
export function playerAddress(server) {
  if (!server.dns) return null;
  return server.address?.transport === 'udp' ? `${server.dns.name}:${server.address.port}` : server.dns.name;
}

/** The refusals of a name, in the dashboard's words (problems.js says "<label> <detail>."). */
const WORDS = {
  dns_name_taken: 'is taken: another server has it (capitals make no difference). Pick another',
  dns_name_reserved: 'is kept by the operator of this service. Pick another',
  validation_failed: 'can only be one word of letters, digits and hyphens (not first or last), without dots or spaces, at most 63 characters',
};

/**
 * A refusal's field problems with those at `dns_name` in words; the others as they came. None for
 * dns_not_configured: its field is hidden then, and the problem's detail says it.
 */
export function inWords(problem) {
  if (problem?.code === 'dns_not_configured') return [];
  return (problem?.errors ?? []).map((e) => (e.pointer === '/body/dns_name' && WORDS[problem.code] ? { pointer: e.pointer, detail: WORDS[problem.code] } : e));
}

/**
 * The "Name players type" field: the label, then the input with the zone after it (`[survival].play.example.com`).
 * Hidden until show(zone) is given a zone. read() gives the name typed, '' for none.
 */
export function dnsNameField(id, value = '') {
  const control = sayAs(h('input', { id, name: 'dns_name', value, maxlength: 63, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'none' }), { label: 'The name' });
  const zoneEl = h('span', { class: 'dns-zone', id: `${id}-zone` });
  const el = field('Name players type', control, { help: 'Optional. Players join with this name instead of an address and a port; it follows the server when it moves.' });
  const wrap = h('div', { class: 'dns-input' });
  control.replaceWith(wrap);
  wrap.append(control, zoneEl);
  control.setAttribute('aria-describedby', `${id}-zone ${control.getAttribute('aria-describedby')}`);
  el.hidden = true;
  return {
    el, control,
    read: () => control.value.trim(),
    /** Shows the field for `zone`, or hides it (null: the service publishes no names). */
    show(zone) {
      el.hidden = !zone;
      zoneEl.textContent = zone ? `.${zone}` : '';
    },
  };
}

/** Puts `text` on the clipboard; where the Clipboard API is missing (not a secure context), selects it instead. */
async function copy(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    announce(`Copied ${text}.`);
  } catch {
    input.focus();
    input.select();
    announce('Selected the address: press Ctrl+C (⌘C) to copy it.');
  }
}

/** `text` in a read-only field with a Copy button beside it (the address, the name players type). */
export function copyField(id, text, label) {
  const input = h('input', { id, readonly: true, value: text, class: 'copy-value', spellcheck: 'false', autocomplete: 'off', 'aria-label': label });
  const button = h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy ${text}` }, 'Copy');
  button.addEventListener('click', () => copy(text, input));
  return h('div', { class: 'copy-field' }, input, button);
}

/** The server's game address (host:port) to copy, with the transport when it is not TCP; '–' without one. */
export function addressFact(address) {
  if (!address) return '–';
  const field = copyField('server-address', `${address.host}:${address.port}`, 'Game address');
  if (address.transport === 'udp') field.append(h('span', { class: 'muted' }, ' (UDP)'));
  return field;
}

/** An update's error (src/dns/updater.ts) without the system's own code at its end (": connect ECONNREFUSED …"). */
const plain = (error) => error.replace(/: (connect|read|write|getaddrinfo) E[A-Z]+\b.*$/, '').replace(/\.$/, '');

/**
 * The address players type, for the server page's facts: the address with a copy button, and whether the DNS
 * server has the records for the server's current name and address (ServerDns.status), with why not yet.
 */
export function playerAddressFact(server) {
  const text = playerAddress(server);
  const { status, error } = server.dns;
  const state = status === 'published'
    ? h('span', { class: 'badge dns-published' }, 'published')
    : h('span', { class: 'badge dns-pending' }, 'pending');
  const why = status === 'published'
    ? 'Players can use it now.'
    : error
      ? `Not published yet: ${plain(error)}. The service keeps trying.`
      : 'Being published: players can use it in a few seconds.';
  return h('div', { class: 'player-address' },
    copyField('player-address', text, 'Address players type'),
    h('p', { class: 'dns-status', id: 'dns-status' }, state, ' ', why));
}

/**
 * The server page's "Name players type" section (its owner's: updateServer): give the server a name, change it
 * (the old name's records go) or remove it. `changed(server)` gets the server as the service answered.
 */
export function dnsNameSection(server, changed) {
  const section = h('section', { 'aria-labelledby': 'dns-name-title', hidden: true }, h('h2', { id: 'dns-name-title' }, 'Name players type'));
  const outcome = h('div', { class: 'outcome' });
  const name = dnsNameField('dns-name', server.dns_name ?? '');
  const controls = new Map([['/body/dns_name', name.control]]);
  const remove = h('button', { type: 'button', class: 'quiet', hidden: !server.dns_name }, 'Remove the name');
  const form = h('form', { novalidate: true }, name.el, h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Save name'), remove));
  section.append(form, outcome);

  async function save(dnsName) {
    showFieldErrors(form, controls, []);
    outcome.replaceChildren();
    try {
      const saved = await api('PATCH', `/v1/servers/${server.id}`, { dns_name: dnsName });
      server = saved;
      remove.hidden = !saved.dns_name;
      name.control.value = saved.dns_name ?? '';
      const text = saved.dns ? `Players can join with ${playerAddress(saved)} once it is published.` : 'The name is removed.';
      outcome.replaceChildren(h('span', {}, text));
      announce(text);
      changed(saved);
    } catch (e) {
      if (e.problem?.code === 'dns_not_configured') {
        section.hidden = true; // the operator stopped publishing names since the page was read
        announce('This service no longer gives servers names.', true);
        return;
      }
      const left = showFieldErrors(form, controls, inWords(e.problem));
      if (left.length || !e.problem?.errors?.length) outcome.replaceChildren(errorBox(`Not saved: ${e.message}`));
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = name.read();
    if (typed === (server.dns_name ?? '')) return void outcome.replaceChildren(h('span', {}, 'Nothing changed.'));
    void save(typed === '' ? null : typed);
  });
  remove.addEventListener('click', () => {
    if (confirm(`Remove the name ${server.dns?.name ?? server.dns_name}? Players who use it can no longer join by it.`)) void save(null);
  });

  zoneFor(server).then((zone) => {
    name.show(zone);
    section.hidden = !zone;
  }, (e) => {
    section.hidden = false;
    fill(outcome, errorBox(`Could not tell whether this service gives names: ${e.message}`));
  });
  return section;
}
