import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostPathMasks, pathMasker, stripTerminalControls } from '../../src/runtime/software/console-text';

/** Anything a terminal would act on: C0 controls but tab, DEL, C1 controls. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/; // eslint-disable-line no-control-regex

// Each case: a line as a game might print it → the line as the console stores it (ECMA-48 names in comments).
const cases: Array<[string, { given: string; want: string }]> = [
  ['plain text', { given: 'Steve joined the game', want: 'Steve joined the game' }],
  ['tabs stay', { given: 'a\tb', want: 'a\tb' }],
  ['non-ASCII text stays', { given: 'héllo wörld ✓ 世界 😀', want: 'héllo wörld ✓ 世界 😀' }],
  ['CSI colour (SGR)', { given: '\x1b[31mred\x1b[0m', want: 'red' }],
  ['CSI with private parameters', { given: '\x1b[?25lhidden cursor\x1b[?25h', want: 'hidden cursor' }],
  ['CSI cursor move and erase', { given: 'a\x1b[2K\x1b[1;1Hb', want: 'ab' }],
  ['C1 CSI (U+009B)', { given: 'a\x9b31mb', want: 'ab' }],
  ['OSC window title ended by BEL', { given: 'x\x1b]0;pwned title\x07y', want: 'xy' }],
  ['OSC hyperlink ended by ST', { given: '\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\', want: 'link' }],
  ['OSC clipboard write (OSC 52)', { given: 'a\x1b]52;c;ZXZpbA==\x07b', want: 'ab' }],
  ['C1 OSC ended by C1 ST', { given: 'a\x9d0;title\x9cb', want: 'ab' }],
  ['unterminated OSC runs to the end of the line', { given: 'a\x1b]0;title', want: 'a' }],
  ['DCS ended by ST', { given: 'a\x1bP1$qm\x1b\\b', want: 'ab' }],
  ['APC, PM and SOS strings', { given: '\x1b_apc\x1b\\1\x1b^pm\x1b\\2\x1bXsos\x1b\\3', want: '123' }],
  ['RIS, full reset (ESC c)', { given: 'a\x1bcb', want: 'ab' }],
  ['character set designation (ESC ( 0)', { given: 'a\x1b(0b\x1b(Bc', want: 'abc' }],
  ['save and restore cursor (ESC 7, ESC 8)', { given: '\x1b7a\x1b8', want: 'a' }],
  ['bare BEL', { given: 'ding\x07', want: 'ding' }],
  ['NUL, backspace, vertical tab, form feed', { given: 'a\x00b\x08c\x0bd\x0ce', want: 'abcde' }],
  ['carriage return (progress bars)', { given: '10%\r20%', want: '10%20%' }],
  ['a lone ESC at the end', { given: 'abc\x1b', want: 'abc' }],
  ['an incomplete CSI at the end', { given: 'abc\x1b[31', want: 'abc31' }],
  ['DEL and other C1 controls', { given: 'a\x7fb\x85c\x8ed', want: 'abcd' }],
  ['an escape hidden behind another ESC', { given: '\x1b\x1b[31m[31mx', want: '[31mx' }],
];

describe('stripTerminalControls', () => {
  test.each(cases)('%s', (_name, { given, want }) => {
    const got = stripTerminalControls(given);
    expect(got).toBe(want);
    expect(got).not.toMatch(CONTROL);
    expect(stripTerminalControls(got)).toBe(got); // idempotent
  });

  test('no control survives, whatever the mix (every code point 0-0x9F around every introducer)', () => {
    const introducers = ['\x1b', '\x1b[', '\x1b]', '\x1bP', '\x9b', '\x9d', '\x90'];
    for (let c = 0; c <= 0x9f; c++) {
      for (const intro of introducers) {
        const got = stripTerminalControls(`a${intro}${String.fromCharCode(c)}b${intro}`);
        expect(got).not.toMatch(CONTROL);
      }
    }
  });
});

describe('pathMasker with a server folder inside DATA_DIR', () => {
  const mask = pathMasker(hostPathMasks('/srv/gsh/data/servers/srv_a1', '/srv/gsh/data'));

  // Each case: a line a game printed → the line as the console stores it.
  test.each([
    ['its working directory', 'cwd: /srv/gsh/data/servers/srv_a1', 'cwd: .'],
    ['a file in its folder', "ENOENT: open '/srv/gsh/data/servers/srv_a1/world/level.dat'", "ENOENT: open './world/level.dat'"],
    ['DATA_DIR itself', 'data in /srv/gsh/data.', 'data in $DATA_DIR.'],
    ['another folder of DATA_DIR', 'at /srv/gsh/data/software/x.cjs:3', 'at $DATA_DIR/software/x.cjs:3'],
    ['a longer server id is another folder', '/srv/gsh/data/servers/srv_a12/world', '$DATA_DIR/servers/srv_a12/world'],
    ['a longer name is not the folder', '/srv/gsh/database, /srv/gsh/data-old, /srv/gsh/data.bak', '/srv/gsh/database, /srv/gsh/data-old, /srv/gsh/data.bak'],
    ['a folder inside another path is not it', '/mnt/srv/gsh/data', '/mnt/srv/gsh/data'],
    ['in a URL', 'file:///srv/gsh/data/servers/srv_a1/x', 'file://./x'],
    ['several on one line', '/srv/gsh/data/servers/srv_a1 and /srv/gsh/data', '. and $DATA_DIR'],
    ['no folder at all', 'Steve joined the game', 'Steve joined the game'],
  ])('%s', (_name, given, want) => {
    expect(mask(given)).toBe(want);
  });

  test('masks nothing when given nothing, or only the root folder', () => {
    expect(pathMasker([])('/srv/x')).toBe('/srv/x');
    expect(pathMasker([['/', '$DATA_DIR']])('/srv/x /')).toBe('/srv/x /');
  });

  test('a DATA_DIR reached through a symlink is masked by its real path too', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-mask-'));
    try {
      const real = path.join(dir, 'real');
      fs.mkdirSync(path.join(real, 'servers', 'srv_b2'), { recursive: true });
      const link = path.join(dir, 'link');
      fs.symlinkSync(real, link);
      const masked = pathMasker(hostPathMasks(path.join(link, 'servers', 'srv_b2'), link));
      expect(masked(`cwd: ${path.join(real, 'servers', 'srv_b2')}`)).toBe('cwd: .');
      expect(masked(`data: ${real} and ${link}`)).toBe('data: $DATA_DIR and $DATA_DIR');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
