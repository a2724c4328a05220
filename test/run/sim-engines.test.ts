import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import { SIM_ENGINE_KINDS } from '../../src/sim/wire/types.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startSimThread, type SimThread } from '../helpers/sim-engines-worker.js';

const HAS_METRICS = new Set(['vllm', 'sglang', 'tgi', 'llamacpp', 'triton']);

// What --api auto should conclude for each simulated engine.
const EXPECTED: Record<string, { engine: RegExp; api: string; forced: boolean }> = {
  vllm: { engine: /^vllm /, api: 'openai-completions', forced: true },
  'vllm-legacy': { engine: /^vllm-legacy/, api: 'vllm', forced: true },
  tgi: { engine: /^tgi /, api: 'tgi', forced: false },
  sglang: { engine: /^sglang /, api: 'openai-completions', forced: true },
  lmdeploy: { engine: /^lmdeploy/, api: 'openai-chat', forced: true },
  llamacpp: { engine: /^llamacpp/, api: 'openai-completions', forced: true },
  triton: { engine: /^triton/, api: 'triton', forced: true },
  ollama: { engine: /^ollama /, api: 'ollama', forced: false },
};

describe('a full sweep against the simulator speaking every engine dialect (--api auto)', () => {
  let tmp: string;
  // The run goes in this thread (no CLI start-up per engine); the simulator in a worker thread, on its own event
  // loop as when the CLI was a process of its own: the top rate rows, near the pair's CPU-bound throughput, are not
  // cut as over-saturated when a loaded machine stalls one thread.
  let sims: SimThread;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'inferbench-engines-'));
    sims = await startSimThread();
  });
  afterAll(async () => {
    await sims?.terminate();
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const kind of SIM_ENGINE_KINDS) {
    it(`${kind}: detected, 11 rows, token counts equal the server's`, async () => {
      const expected = EXPECTED[kind]!;
      // A fast model (time × 0.05) keeps the sweep short; the engine's scheduling is unchanged.
      const url = await sims.start({ engine: kind, model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 3, modelTimeScale: 0.05 });
      try {
        const out = join(tmp, kind);
        // In this process (run's own flag parsing and command): the process itself is not what is tested here.
        // --idle-wait 0: with --drain 60 every row ends with nothing in flight, so the wait for an idle server between
        // rows (two idle /metrics reads, ~0.2 s a row) only added time; nothing here is about it (test/run/between-rows).
        const res = await runInProcess([
          '--target', url, '--profile', 'sweep', '--max-seconds', '0.4', '--prompt-tokens', '64',
          '--output-tokens', '24', '--max-concurrency', '16', '--drain', '60', '--idle-wait', '0', '--out', out, '--no-progress',
        ]);
        expect(res.stderr).toBe('');
        expect(res.code).toBe(0);
        const detected = /detected: (.*)/.exec(res.stdout)?.[1] ?? '';
        expect(detected).toMatch(expected.engine);
        expect(detected).toContain(`speaking ${expected.api}`);
        expect(res.stdout.split('\n').filter((l) => /^\|\s+(synchronous|asynchronous@|throughput)/.test(l))).toHaveLength(11);

        const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
        const ok = records.filter((r) => r.status === 'ok');
        // Each failure with its code and message, so a failed run says why. Unmeasured requests (the cool-down's, a
        // throughput row's ramp-up straggler), cancelled once a row's measured requests had finished, are not failures.
        const cut = records.filter((r) => r.warmup && r.status === 'incomplete');
        expect(records.filter((r) => r.status !== 'ok' && !cut.includes(r)).map((r) => `${r.status} ${r.error?.code ?? ''} ${r.error?.message ?? ''} (row ${r.stage})`).join('\n')).toBe('');
        // Every count the client reports matches what the server generated, request for request (a cool-down
        // request cancelled just as the server finished it is complete on the server's side only).
        const serverCounts = await sims.finishedTokenCounts();
        for (const r of ok) {
          const at = serverCounts.indexOf(r.outputTokens);
          expect(at, `request ${r.id}: ${r.outputTokens} tokens`).toBeGreaterThanOrEqual(0);
          serverCounts.splice(at, 1);
        }
        expect(serverCounts.length).toBeLessThanOrEqual(cut.length);
        if (expected.forced) for (const r of ok) expect(r.outputTokens).toBe(24);
        for (const r of ok) expect(r.tokenCountSource).not.toBe('chunk-count');
        // Engines with a Prometheus endpoint: the server's own gauges are sampled during every row.
        if (HAS_METRICS.has(kind)) {
          expect(res.stdout).toMatch(/server telemetry: sampling/);
          const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: Array<{ server?: { samples: number } }> };
          expect(summary.stages.filter((s) => (s.server?.samples ?? 0) > 0).length).toBeGreaterThan(3);
        }
      } finally {
        await sims.stop();
      }
    });
  }
});
