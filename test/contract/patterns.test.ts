// The spec's regular expressions read the same in the engines clients use (issue 28 §5; docs/conventions.md
// "The contract"): ECMA-262 with and without the `u` flag (Ajv, browsers), Python's `re` (python3 here; left out
// with a note where it is missing), and Rust's `regex`, which refuses any escape that is not a Unicode scalar value,
// so no pattern may name a surrogate code point. (Checked by hand against Debian's regex 1.7.1 crate: all compile.)
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const spec = loadSpec().document as Json;

/** Every `pattern` in the document, with where it is. */
function patterns(node: unknown, at = '#', out: Array<{ at: string; pattern: string }> = []) {
  if (Array.isArray(node)) node.forEach((v, i) => patterns(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === 'pattern' && typeof v === 'string') out.push({ at, pattern: v });
      else patterns(v, `${at}/${k}`, out);
    }
  }
  return out;
}
const all = patterns(spec);

test('every pattern compiles in ECMA-262, with and without the u flag', () => {
  expect(all.length).toBeGreaterThan(20);
  const bad = all.flatMap(({ at, pattern }) => ['u', ''].flatMap((flags) => {
    try {
      new RegExp(pattern, flags);
      return [];
    } catch (e) {
      return [`${at} (${flags || 'no flag'}): ${(e as Error).message}`];
    }
  }));
  expect(bad).toEqual([]);
});

test('no pattern names a surrogate code point (Rust regex: "not a Unicode scalar value")', () => {
  expect(all.filter(({ pattern }) => /\\u[dD][89a-fA-F][0-9a-fA-F]{2}|\\x\{[dD][89a-fA-F]/.test(pattern)).map(({ at }) => at)).toEqual([]);
});

test('every pattern compiles in Python re', () => {
  const python = spawnSync('python3', ['-c', 'import json, re, sys\nfor p in json.load(sys.stdin):\n    try:\n        re.compile(p)\n    except re.error as e:\n        print(p, e)\n'], { input: JSON.stringify(all.map((p) => p.pattern)), encoding: 'utf8' });
  if (python.error) return void process.stdout.write('patterns: python3 is not installed here; Python re is not checked.\n');
  expect([python.status, python.stdout]).toEqual([0, '']);
});

// A name's pattern in each engine that has it here: the same answers.
const names: Array<[string, string, boolean]> = [
  ['a plain name', 'Survival with friends', true],
  ['any script and astral characters', 'Überwelt 世界 🎮', true],
  ['a no-break space inside', 'a\u00a0b', true],
  ['a C1 control (CSI)', 'a\u009b2J', false],
  ['NEL', 'a\u0085', false],
  ['an ESC', 'a\u001b[2J', false],
  ['a lone surrogate', 'a\ud800b', false],
  ['a leading space', ' a', false],
];
test.each(names)('ServerName: %s', (_name, text, ok) => {
  const pattern: string = spec.components.schemas.ServerName.pattern;
  expect(new RegExp(pattern, 'u').test(text)).toBe(ok);
  const python = spawnSync('python3', ['-c', 'import json, re, sys\np, s = json.load(sys.stdin)\nprint(bool(re.match(p, s)))'], { input: JSON.stringify([pattern, text]), encoding: 'utf8' });
  if (!python.error) expect(python.stdout.trim()).toBe(ok ? 'True' : 'False');
});

// A Python reader of the spec: openapi-spec-validator (its 3.1 schema and the JSON Schema 2020-12 dialect), where
// python3 has it; the test says so where it does not.
test('openapi-spec-validator (Python) finds the spec valid', () => {
  const script = 'import sys, yaml\nfrom openapi_spec_validator import validate\nvalidate(yaml.safe_load(open(sys.argv[1])))\nprint("valid")';
  const res = spawnSync('python3', ['-c', script, path.join(__dirname, '..', '..', 'openapi', 'v1.yaml')], { encoding: 'utf8' });
  if (res.error || /No module named/.test(res.stderr)) return void process.stdout.write('patterns: openapi-spec-validator is not installed here; not run.\n');
  expect([res.status, res.stdout.trim(), res.stderr.slice(-500)]).toEqual([0, 'valid', '']);
});
