import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file opens its own database (a PGlite copy of the migrated template, or a PostgreSQL database
    // made from a template); two workers keep a 2-core machine responsive.
    pool: 'forks',
    maxWorkers: 2,
    // Each worker process runs its files one after another in one module graph: importing the service's module
    // graph again for every file cost ~2 s a file (140 s of 190 s for test/http and test/domain; the whole suite
    // 606 s isolated, 428 s not). Files share no state but the modules: no test mocks a module, stubs a global or
    // changes process.env, and every database, app and clock is made per file.
    isolate: false,
    fileParallelism: true,
  },
});
