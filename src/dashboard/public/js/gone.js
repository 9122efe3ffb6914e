// A server page the reader may no longer see (issue 38 §2). The API answers 404 server_not_found alike for a server
// that was deleted and for one that is not, or no longer, shared with the reader (docs/conventions.md "Sharing":
// a server one may not see does not exist for them), so the page cannot tell the two apart and says both.
import { h, fill } from './dom.js';
import { SERVER_GONE } from './problems.js';

/** Whether `e` (an ApiError) says the server is not there for this reader. */
export const isGone = (e) => e?.problem?.code === 'server_not_found';

/** The page in place of a server's (or its files') once the server is not there for the reader. */
export function goneView(main) {
  document.title = 'No access to this server · Dashboard';
  fill(main,
    h('h1', { id: 'gone-title' }, 'No access to this server'),
    h('p', { id: 'gone-text' }, SERVER_GONE),
    h('p', {}, 'If someone shared it with you, ask them to invite you again. ', h('a', { href: '#/servers' }, 'Your servers')));
}
