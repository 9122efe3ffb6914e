// The order jest starts test files in (jest.config.js testSequencer). jest's own order stays where it knows
// something: files that failed last time first, then the longest by the times it kept from the last run. Where it
// knows nothing, as in CI's clean checkout, it falls back to the largest file first, which starts short files
// that drive real games, browsers and compilers (test/contract, test/e2e) last, and one of them then runs alone at
// the end while the other workers idle. So without times, the folders whose files wait on real processes go first.
const Sequencer = require('@jest/test-sequencer').default;

const slowFolders = ['/test/contract/', '/test/e2e/', '/test/security/', '/test/dashboard/', '/test/runtime/', '/test/docker/'];
const slow = (test) => slowFolders.some((f) => test.path.includes(f));

class SlowFoldersFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    // Array.prototype.sort is stable: within each group the largest file stays first.
    return sorted.sort((a, b) => Number(slow(b)) - Number(slow(a)));
  }
}

module.exports = SlowFoldersFirst;
