/** @type {import('jest').Config} */
// Type checking is done once by `npm run lint` (tsc); tests only transpile, which keeps them fast.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }];
const shared = {
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: {
    '^@tessera/(common|protos|sdk|stack|test-support|merchant-data|edge|routes)$': '<rootDir>/packages/$1/src',
    '^@tessera/admin$': '<rootDir>/services/admin/src',
    '^@tessera/js/locale$': '<rootDir>/packages/js/src/shared/locale',
    '^@tessera/common/redis$': '<rootDir>/packages/common/src/redis',
    '^@tessera/test-support/(.*)$': '<rootDir>/packages/test-support/src/$1',
  },
  testEnvironment: 'node',
};
module.exports = {
  // Most integration files wait on processes, sockets and timers, not the CPU: three files at a time
  // finish a run in well under half the in-band time even on two cores (CI), while four buy little more
  // and crowd the timing-sensitive fault suites. Ports are split per worker (PortBlock).
  maxWorkers: 3,
  // No forceExit: a file that leaves a server, socket or timer running must close it (docs/testing.md).
  // With workers Jest stops a worker that does not exit and says so; in band the run would not end.
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{packages,services}/*/src/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      setupFiles: ['<rootDir>/packages/test-support/src/noKeepAlive.ts'],
      // One stack per worker for the files that use useSharedStack() (packages/test-support/src/sharedStack.ts).
      globalSetup: '<rootDir>/packages/test-support/src/sharedStacksSetup.ts',
      globalTeardown: '<rootDir>/packages/test-support/src/sharedStacksTeardown.ts',
      slowTestThreshold: 30,
    },
  ],
};
