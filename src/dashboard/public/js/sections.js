// A long page in sections the customer jumps between (issue 38 §6: the server page was 8.5 screens tall on a
// phone). A menu of links, one per section, sits under the page's heading and stays in reach (sticky, app.css
// .sections); only the chosen section is shown. Each section has its own address, #/servers/srv_…/console, so a
// section can be bookmarked, shared and reached with Back, and the first section is what the page's own address
// shows. Every section is built when the page loads and keeps its streams while hidden, so a jump reads nothing
// (docs/dashboard-budget.md counts the page as a whole).
import { h } from './dom.js';

/**
 * `base` is the page's address (#/servers/srv_…). `entries` are the sections in menu order:
 * `{ key, title, content: [element or false, …] }`, the first the default; an entry whose content is all false
 * (the reader lacks the permission) is left out; `{ key, title, href }` links to another page (Files). `home` gets
 * the focus when the first section is chosen (the page's h1). Returns the menu and the panels to put in the page,
 * and `show(hash)`, true when the hash was this page's (it is then shown, and nothing needs to be read again).
 */
export function sectionMenu(base, entries, { home, label, signal }) {
  const kept = entries.filter((e) => e.href || e.content.some(Boolean));
  const first = kept.find((e) => !e.href)?.key;
  const links = new Map();
  const panels = new Map();
  for (const e of kept) {
    const href = e.href ?? (e.key === first ? base : `${base}/${e.key}`);
    links.set(e.key, h('a', { href, 'data-section': e.key }, e.title));
    if (!e.href) panels.set(e.key, h('div', { class: 'section-panel', id: `section-${e.key}`, 'data-section-panel': e.key, hidden: true }, e.content));
  }
  const nav = h('nav', { class: 'sections', 'aria-label': label }, h('ul', {}, [...links.values()].map((a) => h('li', {}, a))));

  // The sticky menu must not hide what the keyboard focuses under it (WCAG 2.2 SC 2.4.11): focus scrolls past it.
  const root = document.documentElement;
  const pad = new ResizeObserver(() => (root.style.scrollPaddingTop = `${nav.offsetHeight + 8}px`));
  pad.observe(nav);
  signal.addEventListener('abort', () => {
    pad.disconnect();
    root.style.scrollPaddingTop = '';
  }, { once: true });

  let shown = null;
  /** Shows the section `hash` names; `focus` moves the focus to its heading (a jump, not the page's first load). */
  function show(hash, focus = true) {
    if (!nav.isConnected) return false; // the page was replaced (goneView): the router draws it again
    let key = hash === base ? first : hash.startsWith(`${base}/`) ? hash.slice(base.length + 1) : null;
    if (key === null || key.includes('/') || (links.has(key) && !panels.has(key))) return false; // another page's (Files)
    if (!panels.has(key)) {
      // A section this reader does not have (a permission), or no such one: the first, at its address. Replaced
      // without a hashchange, so the router does not draw the page again.
      history.replaceState(history.state, '', base);
      key = first;
    }
    for (const [k, panel] of panels) panel.hidden = k !== key;
    for (const [k, a] of links) {
      if (k === key) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const panel = panels.get(key);
    // Said to each part of the section, now that it has a size again: the console scrolls to its tail.
    if (shown !== key) for (const part of panel.children) part.dispatchEvent(new Event('section-shown'));
    shown = key;
    if (focus) {
      // The first heading shown: a section may hide one of its parts (dns-name.js, where names are not given).
      const heading = [...panel.querySelectorAll('h2')].find((x) => x.getClientRects().length > 0);
      const target = key === first ? home : heading ?? home;
      target.setAttribute('tabindex', '-1');
      target.focus();
    }
    return true;
  }
  return { nav, panels: [...panels.values()], show };
}
