// Text a person reads in a terminal (the CLI's output) and the names the API takes: nothing in it may drive the
// terminal. A terminal acts on C0 controls (ESC starts a sequence), DEL and C1 controls (U+009B is CSI by itself:
// `\u009b2J` clears the screen; ECMA-48 §5.3), and a name with a line or paragraph separator or a lone surrogate
// prints as something it is not.

/**
 * What a name may not hold (openapi/v1.yaml ServerName, CreateTokenRequest.name, AlertRuleName): C0 controls,
 * DEL, C1 controls, and unpaired surrogates (the spec writes them as U+D7FF–U+E000 so that one pattern reads the
 * same in ECMA-262, Python and Rust engines; this is the same range).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_IN_A_NAME = /[\u0000-\u001f\u007f-\u009f\ud7ff-\ue000]/u;

/** True when `text` holds a character a name may not (see NOT_IN_A_NAME). */
export function hasControlCharacters(text: string): boolean {
  return NOT_IN_A_NAME.test(text);
}

// Everything a terminal could act on or misprint, but the newline and tab of our own output: C0 but \t and \n, DEL,
// C1, the line and paragraph separators, the bidirectional controls and marks (which reorder what follows them:
// U+202A–U+202E, U+2066–U+2069, LRM U+200E, RLM U+200F, ALM U+061C), the invisible ones a name can hide behind
// (zero-width space, joiners, word joiner and invisible operators U+200B–U+200D, U+2060–U+2064, the deprecated
// format controls U+206A–U+206F, U+FEFF, U+180E) and tag characters (U+E0000–U+E007F), lone surrogates.
const NOT_PRINTABLE =
  // eslint-disable-next-line no-control-regex -- the point is to match them
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u{e0000}-\u{e007f}]|[\ud800-\udfff]/gu;

/**
 * `text` with every character a terminal would act on written as a visible escape (`\u009b`, `\u001b`), so printing
 * it cannot move the cursor, clear the screen, set a title or reorder the line. Tabs and newlines stay: they are the
 * CLI's own layout. Printable text, any script, is unchanged.
 */
export function printable(text: string): string {
  return text.replace(NOT_PRINTABLE, (c) => {
    const code = c.codePointAt(0) ?? 0; // a match is never empty, so never the fallback
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
