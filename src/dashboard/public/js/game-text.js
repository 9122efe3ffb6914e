// What games write and name, said the dashboard's way (issue 38 §2): a console line without the game's own clock
// (the line already has the page's, in the reader's time zone: format.js), and a setting's value id in words.

// The clocks games put at the start of a line, in the host's time zone, not the reader's:
const CLOCKS = [
  /^[A-Z][a-z]+ \d{1,2}(?:st|nd|rd|th) \d{4}, \d{2}:\d{2}:\d{2}\s+/, // flying-squid: "November 27th 2026, 14:03:07 "
  /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?:?\s+/, // Luanti: "2026-11-27 14:03:07: "
  /^\[\d{2}:\d{2}:\d{2}(?:\.\d+)?\]\s*/, // Minecraft's own server: "[14:03:07] "
];

/** A console line's text without the clock the game wrote at its start: the page shows one clock, its own. */
export function withoutClock(text) {
  for (const clock of CLOCKS) {
    const m = clock.exec(text);
    if (m && m[0].length < text.length) return text.slice(m[0].length);
  }
  return text;
}

/**
 * A setting's value (an enum's id) in words: "diamond_square" reads "Diamond square", "creative" "Creative". The
 * software definitions give ids only (JSON Schema `enum`); true and false and numbers stay as they are.
 */
export function valueName(value) {
  if (typeof value !== 'string' || !/^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$/.test(value)) return String(value);
  const words = value.replace(/[_-]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
