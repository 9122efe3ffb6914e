import fs from 'node:fs';
import path from 'node:path';

// What a console line may contain once the service stores it (the ring buffer, logs/console.log) and shows it
// (the API, the SSE stream): text, never something a terminal would act on, and never the host's folders.

/**
 * Every terminal control sequence and control character, per ECMA-48 (5th edition), in one pattern. Order
 * matters: a whole sequence is removed before its introducer alone could be.
 */
const TERMINAL_CONTROLS = new RegExp(
  [
    // Control strings (ECMA-48 §5.6, §8.3.89): OSC, DCS, SOS, PM, APC, 7-bit (ESC ] …) or 8-bit (U+009D …), up to
    // their terminator ST (ESC \ or U+009C) or BEL (xterm ends OSC with it too); unterminated, to the line's end.
    String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?`,
    // Control sequences (§5.4): CSI (ESC [ or U+009B), parameter bytes, intermediate bytes, one final byte.
    String.raw`(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]`,
    // Other escape sequences (§5.3; ECMA-35 §13): ESC, intermediate bytes, one final byte (ESC c, ESC ( B, ESC 7).
    String.raw`\x1b[\x20-\x2f]*[\x30-\x7e]`,
    // Whatever is left: every C0 control but tab (a lone ESC, BEL, CR, backspace), DEL, every C1 control.
    String.raw`[\x00-\x08\x0a-\x1f\x7f-\x9f]`,
    // Not terminal controls, but they forge a line all the same (issue 39 §3): the line and paragraph separators,
    // which a viewer breaks a line at, and the bidirectional controls (Unicode UAX #9 §2: U+061C, U+200E, U+200F,
    // U+202A–U+202E, U+2066–U+2069), which reorder what follows them, so `…\u202e` shows text backwards.
    String.raw`[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]`,
  ].join('|'),
  'gu',
);

/**
 * The line without any terminal control: colours, cursor moves, window titles, device strings, resets and lone
 * control characters are removed, and so are line separators and bidirectional controls; tabs and every other
 * printable character stay. What is left contains no C0 control but tab, no DEL, no C1 control and no bidi
 * control, so showing it (`tail -f logs/console.log`, a dashboard) cannot drive the viewer's terminal nor reorder
 * the line. Idempotent.
 */
export function stripTerminalControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, '');
}

/** An absolute folder of the host and what a console line shows in its place. */
export type PathMask = readonly [folder: string, standIn: string];

/**
 * The masks for one server's console: its folder becomes `.` and DATA_DIR becomes `$DATA_DIR`, so a game that
 * prints its working directory (or a stack trace through its world) shows users no folder of the host. Each
 * also as its real path when DATA_DIR goes through a symlink, since a game's getcwd(3) resolves symlinks.
 */
export function hostPathMasks(serverDir: string, dataDir: string): PathMask[] {
  const masks: PathMask[] = [
    [serverDir, '.'],
    [dataDir, '$DATA_DIR'],
  ];
  let real: string | null = null;
  try {
    real = fs.realpathSync(dataDir);
  } catch {
    // Not there yet: nothing can have printed its real path either.
  }
  if (real && real !== dataDir) masks.push([path.join(real, path.relative(dataDir, serverDir)), '.'], [real, '$DATA_DIR']);
  return masks;
}

/**
 * A function that replaces each masked folder wherever it stands as a whole path, not inside a longer name:
 * `/srv/data` is masked in `/srv/data/x` and `in /srv/data.`, not in `/srv/database` or `/srv/data.old`. The
 * longest folder is tried first, so a server's folder wins over the DATA_DIR that holds it. The root folder is
 * never masked.
 */
export function pathMasker(masks: readonly PathMask[]): (text: string) => string {
  const used = masks.filter(([folder]) => folder.length > 1).sort((a, b) => b[0].length - a[0].length);
  if (used.length === 0) return (text) => text;
  const standIns = new Map(used.map(([folder, standIn]) => [folder, standIn]));
  const alternatives = used.map(([folder]) => folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Not after a name character; not before one, nor before a dot that goes on with one (a full stop may follow).
  const pattern = new RegExp(`(?<![\\w.-])(?:${alternatives.join('|')})(?![\\w-]|\\.[\\w.-])`, 'g');
  return (text) => text.replace(pattern, (folder) => standIns.get(folder) ?? folder);
}

/**
 * What a name the service passes on (a player's, as a game reports it: the API's Player, player events, webhooks)
 * may not hold: controls (tab too), line separators, bidi controls (as above), lone surrogates.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_IN_PLAIN_TEXT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udfff]/u;

/** True for text of 1 to `max` characters with none of NOT_IN_PLAIN_TEXT in it. */
export function isPlainText(text: string, max: number): boolean {
  return text.length > 0 && text.length <= max && !NOT_IN_PLAIN_TEXT.test(text);
}

/** What the spec's ConsoleCommand refuses: control characters (tab too), line separators, unpaired surrogates (as the range U+D7FF–U+E000, the spec's form). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_IN_A_COMMAND = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ud7ff-\ue000]/u;

/** True for one line of text that is not only spaces: what a console command must be (spec: ConsoleCommand). */
export function isCommandLine(text: string): boolean {
  return text.trim() !== '' && !NOT_IN_A_COMMAND.test(text);
}
