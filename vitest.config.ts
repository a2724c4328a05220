import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'threads',
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
