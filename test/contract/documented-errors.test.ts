// The errors the spec documents agree with the one registry (src/errors.ts; docs/conventions.md "Errors"): where
// an operation's text says it answers "`403 quota_exceeded`", the operation has a 403 answer, whose description
// names that code, and the registry gives the code that status; every code a shared answer names has that
// answer's status; and every quota the code throws (QuotaName) is one the spec lists.
import fs from 'node:fs';
import path from 'node:path';
import { errorRegistry, type ErrorCode } from '../../src/errors';
import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const spec = loadSpec().document as Json;
const codes = Object.keys(errorRegistry) as ErrorCode[];
const deref = (node: Json): Json => (node.$ref ? deref(node.$ref.replace('#/', '').split('/').reduce((at: Json, k: string) => at[k], spec)) : node);

/** The registry codes a text names in backticks. */
const named = (text: string) => codes.filter((c) => text.includes(`\`${c}\``) || new RegExp(`\`\\d{3} ${c}\``).test(text));

test('every shared error answer names only codes of its status', () => {
  const statusOf: Record<string, Set<string>> = {};
  for (const item of Object.values(spec.paths as Json)) {
    for (const op of Object.values(item as Json)) {
      for (const [status, response] of Object.entries((op as Json).responses ?? {})) {
        const ref = (response as Json).$ref as string | undefined;
        if (ref) (statusOf[ref] ??= new Set()).add(status);
      }
    }
  }
  const wrong: string[] = [];
  for (const [ref, statuses] of Object.entries(statusOf)) {
    for (const code of named(deref({ $ref: ref }).description ?? '')) {
      for (const status of statuses) if (String(errorRegistry[code].status) !== status) wrong.push(`${ref} (${status}) names ${code} (${errorRegistry[code].status})`);
    }
  }
  expect(wrong).toEqual([]);
});

test('an operation that says it answers "`NNN code`" documents NNN with an answer that names the code', () => {
  const wrong: string[] = [];
  let found = 0;
  for (const item of Object.values(spec.paths as Json)) {
    for (const op of Object.values(item as Json) as Json[]) {
      if (!op?.operationId) continue;
      for (const m of String(op.description ?? '').matchAll(/`(\d{3}) ([a-z_]+)`/g)) {
        const [, status, code] = m;
        if (!(code in errorRegistry)) continue;
        found++;
        const response = op.responses[status] && deref(op.responses[status]);
        if (String(errorRegistry[code as ErrorCode].status) !== status) wrong.push(`${op.operationId}: ${status} ${code}, but the registry says ${errorRegistry[code as ErrorCode].status}`);
        else if (!response) wrong.push(`${op.operationId}: says ${status} ${code} but documents no ${status}`);
        else if (!named(response.description ?? '').includes(code as ErrorCode)) wrong.push(`${op.operationId}: its ${status} answer does not name ${code}`);
      }
    }
  }
  expect(found).toBeGreaterThan(10);
  expect(wrong).toEqual([]);
});

test('every quota the code names is a QuotaName of the spec, and the reverse', () => {
  // quotaExceeded('…') in src/ (its parameter is typed QuotaName, so tsc already refuses one the spec lacks).
  const src = path.join(__dirname, '..', '..', 'src');
  const thrown = new Set<string>();
  for (const file of fs.readdirSync(src, { recursive: true }).map(String).filter((f) => f.endsWith('.ts'))) {
    for (const m of fs.readFileSync(path.join(src, file), 'utf8').matchAll(/quotaExceeded\(\s*'([a-z_]+)'/g)) thrown.add(m[1]);
  }
  expect([...thrown].sort()).toEqual([...spec.components.schemas.QuotaName.enum].sort());
});
