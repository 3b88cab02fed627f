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
  // jest's ESM mode keeps every test file's modules in its worker's heap (jestjs/jest#14605): about
  // 60 MB a file here, so each worker ended the suite with 1.2 GB of heap (1.7 GB resident). Freeing
  // that at exit took 270-510 ms, and past 500 ms jest reports "A worker process has failed to exit
  // gracefully" although no handle is open. A worker whose heap passes this limit after a test file
  // is replaced by a fresh one, so none ends the run holding more.
  workerIdleMemoryLimit: '512MB',
};
