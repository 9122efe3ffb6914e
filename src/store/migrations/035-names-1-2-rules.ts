// Names saved under the 1.1.0 rules, made valid under today's (issue 42 §2; CHANGELOG.md 1.2.0 "Breaking"): 1.2.0
// narrowed the name patterns (ServerName, TokenName, AlertRuleName in openapi/v1.yaml) to refuse DEL, the C1
// controls U+0080–U+009F, U+D7FF and U+E000, but names saved before kept them, so `GET /v1/servers` answered a
// `name` its own schema refuses and sending it back in a PATCH was a 400. Each such character in a stored server,
// token or alert rule name becomes U+FFFD (the replacement character), which every pattern takes; nothing else
// changes. C0 controls and unpaired surrogates were refused (or cannot be stored) from the first release.
const refused = [0x7f, ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i), 0xd7ff, 0xe000];

/** `column` with every refused character replaced by U+FFFD, as nested SQLite replace() calls. */
function cleaned(column: string): string {
  return refused.reduce((inner, code) => `replace(${inner}, char(${code}), char(65533))`, column);
}

/** Only rows that hold one of them are written (their updated_at stays: no person changed them). */
function fix(table: string): string {
  const glob = `'*[' || ${refused.map((code) => `char(${code})`).join(' || ')} || ']*'`;
  return `UPDATE ${table} SET name = ${cleaned('name')} WHERE name GLOB ${glob};`;
}

export const sql = ['servers', 'tokens', 'alert_rules'].map(fix).join('\n');
