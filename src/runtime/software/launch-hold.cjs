'use strict';
/**
 * A start made ahead (a software definition's `launch_hold`; docs/architecture.md "Moving a server"): with GSH_HOLD
 * set, a move has started the game's container on the new node while its last pass still writes the world, so the
 * launcher loads its code now (Node's boot and the game's modules: a third of a start, more under the plan's CPU
 * quota) and reads nothing of its folder until the supervisor writes HOLD_GO on stdin (docker-environment.ts spawn).
 * Not told within HOLD_MAX_MS, or stdin closed: it leaves, having read nothing. Plain JavaScript, as its launchers.
 */
const HOLD_GO = 'gsh go';
const HOLD_MAX_MS = 10 * 60_000;

/** Without GSH_HOLD, `run()` now; with it, `load()` now and `run()` once told to go. */
function runWhenTold(run, load) {
  if (!process.env.GSH_HOLD) return void run();
  load();
  const timer = setTimeout(() => process.exit(0), HOLD_MAX_MS);
  let text = '';
  const onEnd = () => process.exit(0);
  const onData = (chunk) => {
    text += chunk.toString('utf8');
    const eol = text.indexOf('\n');
    if (eol < 0) return;
    process.stdin.off('data', onData).off('end', onEnd).pause();
    clearTimeout(timer);
    if (text.slice(0, eol).trim() !== HOLD_GO) process.exit(1);
    const rest = text.slice(eol + 1);
    if (rest !== '') process.stdin.unshift(Buffer.from(rest, 'utf8')); // console commands already sent
    run();
  };
  process.stdin.on('data', onData).on('end', onEnd);
}

module.exports = { runWhenTold, HOLD_GO };
