// The order jest starts test files in (jest.config.js testSequencer): longest first, so no long file starts late
// and runs alone at the end while the other workers idle. jest's own order stays where it knows something: files
// that failed last time first, then the longest by the times it kept from the last run. Where it knows nothing, as
// in CI's clean checkout, the times come from test/helpers/durations.json, seconds per file from a whole run on
// the 2-core machine (`GSH_WRITE_DURATIONS=1 npm test` rewrites it); a file not listed there is guessed from its
// folder, since the folders that drive real games, browsers and compilers hold the long files.
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const root = path.join(__dirname, '..', '..');
const durationsFile = path.join(__dirname, 'durations.json');
const slowFolders = ['/test/contract/', '/test/e2e/', '/test/security/', '/test/dashboard/', '/test/runtime/', '/test/docker/'];

function knownDurations() {
  try {
    return JSON.parse(fs.readFileSync(durationsFile, 'utf8'));
  } catch {
    return {};
  }
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    const known = knownDurations();
    const guess = (test) => known[path.relative(root, test.path)] ?? (slowFolders.some((f) => test.path.includes(f)) ? 20 : 2);
    // Array.prototype.sort is stable: between equal guesses the largest file stays first.
    return sorted.sort((a, b) => guess(b) - guess(a));
  }
}

module.exports = LongestFirst;
