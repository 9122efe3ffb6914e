import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The size limits of docs/conventions.md "Code layout", measured rather than hoped for: every source file under
 * src/ stays around 300 lines and every function around 80, counted whole from its first line to its last, nested
 * functions included (a factory of small methods is as long as it reads). The margins below are the "around"; a
 * file or function past them is split along its responsibilities. Data tables (software definitions, the dashboard's
 * static files) are not code and are not counted.
 */
const MAX_FILE_LINES = 320;
const MAX_FUNCTION_LINES = 80;
const root = path.join(__dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'public' ? [] : sourceFiles(full);
    return /\.(ts|cjs|js)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Functions (declarations, methods, arrows, function expressions) longer than the limit, nested functions
 * included, as `name:line (n lines)`.
 */
function longFunctions(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      const name = node.name?.getText(source) ?? '(anonymous)';
      if (lines > MAX_FUNCTION_LINES) {
        found.push(`${path.relative(root, file)}:${start + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = sourceFiles(root);

test.each(files.map((f) => [path.relative(root, f), f]))(`%s is at most ${MAX_FILE_LINES} lines`, (_name, file) => {
  expect(fs.readFileSync(file, 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_FILE_LINES);
});

test(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
  expect(files.flatMap(longFunctions)).toEqual([]);
});
