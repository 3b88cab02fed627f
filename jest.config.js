/** ts-jest in ESM mode; run with NODE_OPTIONS=--experimental-vm-modules (npm run test:jest does). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  // @peculiar/x509 needs the Reflect polyfill loaded once per process, as src/cmd/main.ts does.
  setupFiles: ['reflect-metadata'],
  testTimeout: 30000,
  maxWorkers: 2,
};
