import { defineConfig } from 'vitest/config';

/**
 * `npm run test:llamacpp`: inferbench against a real llama.cpp llama-server built from source (the first run
 * on a machine builds it: ~10+ minutes on 2 cores, cached under ~/.cache/inferbench). Its files end in
 * .e2e.ts so the default `npm test` (test/**\/*.test.ts) never picks them up.
 */
export default defineConfig({
  test: {
    include: ['test/llamacpp/**/*.e2e.ts'],
    globalSetup: ['test/llamacpp/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 10 * 60_000,
    hookTimeout: 10 * 60_000,
  },
});
