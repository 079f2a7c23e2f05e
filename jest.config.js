/** @type {import('jest').Config} */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }];
const shared = {
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@tessera/(common|protos)$': '<rootDir>/packages/$1/src' },
  testEnvironment: 'node',
};
module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{packages,services}/*/src/**/*.test.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'], slowTestThreshold: 30 },
  ],
};
