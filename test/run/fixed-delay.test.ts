import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createSyntheticWorkload } from '../../src/workload/synthetic.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { repoRoot } from '../helpers/cli.js';

const TTFT = 60;
const ITL = 25;
const TOKENS = 12;

describe('measuring a server with known fixed delays', () => {
  // The server runs in its own process: sharing one event loop would let each side delay the other.
  let child: ChildProcess;
  let server: { url: string; truthUrl: string };
  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/fixed-delay-child.ts', String(TTFT), String(ITL), '33'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
    const [url = '', truthUrl = ''] = line.split(' ');
    server = { url, truthUrl: `${truthUrl}/truth` };
  });
  afterAll(() => void child.kill('SIGTERM'));

  for (const api of ['openai-chat', 'openai-completions'] as const) {
    it(`${api}: TTFT and ITL match the server's delays at 100 concurrent streams; counts come from usage`, async () => {
      const tokenizer = await loadApproxTokenizer();
      const target = new HttpTarget({ baseUrl: server.url, connections: 100 });
      const records: RequestRecord[] = [];
      const runner = createHttpStageRunner({
        target,
        dialect: getDialect(api),
        model: 'test-model',
        forceLength: true,
        stream: true,
        tokenizer,
        seed: 1,
        onRecord: (r) => records.push(r),
      });
      const workload = createSyntheticWorkload({ promptTokens: 32, outputTokens: TOKENS, seed: 1, tokenizer });
      const result = await runBenchmark(
        { profile: 'concurrent', concurrencies: [100], limits: { maxRequests: 300 }, workload },
        runner,
      );
      await target.close();
      const [row] = result.stages;
      expect(row?.requests.ok).toBe(300);
      expect(records).toHaveLength(300);
      for (const r of records) {
        expect(r.status).toBe('ok');
        expect(r.outputTokens).toBe(TOKENS);
        expect(r.tokenCountSource).toBe('server-usage');
        expect(r.promptTokens).toBe(33);
        expect(r.chunks).toBe(TOKENS);
      }
      const m = row!.metrics;
      // The server is timer-driven on the same two busy cores, so it runs a little late; compare the client
      // with what the server actually did (same clock), and the server with its nominal delays, loosely.
      const truth = (await (await fetch(server.truthUrl)).json()) as Array<{ receivedAtMs: number; writesMs: number[] }>;
      expect(truth).toHaveLength(300);
      const serverTtft = median(truth.map((t) => (t.writesMs[0] as number) - t.receivedAtMs));
      const serverItl = median(truth.map((t) => ((t.writesMs[TOKENS - 1] as number) - (t.writesMs[0] as number)) / (TOKENS - 1)));
      expect(Math.abs(m.ttftMs!.median - serverTtft)).toBeLessThan(10);
      expect(Math.abs(m.itlMs!.median - serverItl)).toBeLessThan(10);
      expect(Math.abs(serverTtft - TTFT)).toBeLessThan(40);
      expect(Math.abs(serverItl - ITL)).toBeLessThan(10);
      expect(Math.abs(m.e2eMs!.median - (TTFT + ITL * (TOKENS - 1)))).toBeLessThan(60);
      expect(row!.meanConcurrency).toBeGreaterThan(80);
    });
  }
});

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
