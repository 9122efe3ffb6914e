// Types are checked once by `tsc -p tsconfig.test.json` in scripts/test.js; jest only transpiles
// (ts-jest isolatedModules), which keeps each test file's start-up short.
const os = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testTimeout: 120_000, // generous: CI's two cores are shared with the other workers' games and browsers
  // Two files per core: the suite mostly waits on games, browsers and timers (docs/conventions.md "Tests"). A number,
  // not '200%': jest reads a percentage only up to 100 % and takes '200%' as 200 workers.
  maxWorkers: 2 * os.availableParallelism(),
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
};
