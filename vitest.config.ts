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
    fileParallelism: true,
  },
});
