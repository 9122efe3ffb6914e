// Types are checked once by `tsc -p tsconfig.test.json` in scripts/test.js; jest only transpiles
// (ts-jest isolatedModules), which keeps each test file's start-up short.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testTimeout: 120_000, // generous: CI's two cores are shared with the other worker's games and browsers
  maxWorkers: 2,
};
