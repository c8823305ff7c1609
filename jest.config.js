/** Jest runs the TypeScript tests in test/ through ts-jest. Type errors are caught by
 * `npm run build` (tsc over the whole tree, tests included), so ts-jest only transpiles. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
