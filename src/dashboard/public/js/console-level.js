// Which console lines are errors and warnings, so the console can mark them (issue 38 §6). Read from the level the
// game wrote at the line's start (after its clock, game-text.js withoutClock): flying-squid "[ERROR]: …" and
// "[WARN]: …", Minecraft's own server "[Server thread/WARN]: …" (log4j), Luanti "ERROR[Main]: …" and
// "WARNING[Main]: …". A level word later in the line (a player's chat saying "ERROR") does not count.
const LEVEL = /^\s*(?:\[(?:[^\]]*[/ ])?(ERROR|SEVERE|FATAL|WARN|WARNING)\]|(ERROR|WARNING)\[[^\]]*\]):/;

/** 'error', 'warn', or null for a line that says neither at its start. */
export function lineLevel(text) {
  const m = LEVEL.exec(text);
  const level = m ? m[1] ?? m[2] : null;
  if (!level) return null;
  return level.startsWith('WARN') ? 'warn' : 'error';
}
