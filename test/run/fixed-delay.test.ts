import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDialect } from '../../src/dialects/index.js';
import { runBenchmark } from '../../src/load/benchmark.js';
import { createHttpStageRunner } from '../../src/load/http-runner.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { HttpTarget } from '../../src/transport/http.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadApproxTokenizer } from '../../src/workload/tokenizer.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { repoRoot } from '../helpers/cli.js';
import { monotonicOffsetMs } from '../helpers/clock-join.js';

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
      const workload = await createWorkload(
        { kind: 'synthetic', prompt: { kind: 'fixed', value: 32 }, output: { kind: 'fixed', value: TOKENS } },
        { tokenizer, seed: 1 },
      );
      const result = await runBenchmark(
        { profile: 'concurrent', concurrencies: [100], limits: { maxRequests: 300 }, workload },
        runner,
      );
      await target.close();
      const [row] = result.stages;
      expect(row?.requests.ok).toBe(300);
      // The 300 measured requests; the streams' cool-down after them (unmeasured, cut once they had finished) is not.
      const measured = records.filter((r) => !r.warmup);
      expect(measured).toHaveLength(300);
      for (const r of measured) {
        expect(r.status).toBe('ok');
        expect(r.outputTokens).toBe(TOKENS);
        expect(r.tokenCountSource).toBe('server-usage');
        expect(r.promptTokens).toBe(33);
        expect(r.chunks).toBe(TOKENS);
      }
      const m = row!.metrics;
      // The client is judged against what the server actually did, request by request, on one clock:
      // the server runs in its own process and its timers run late on two busy cores, which is not the
      // client's error. Times join through CLOCK_MONOTONIC (helpers/clock-join.ts).
      const body = (await (await fetch(server.truthUrl)).json()) as {
        monotonicOffsetMs: number;
        truth: Array<{ id: string; receivedAtMs: number; writesMs: number[] }>;
      };
      expect(body.truth.length).toBeGreaterThanOrEqual(300);
      const toClient = body.monotonicOffsetMs - monotonicOffsetMs();
      const byId = new Map(body.truth.map((t) => [t.id, t]));
      const ttftErr: number[] = [];
      const itlErr: number[] = [];
      for (const r of measured) {
        const t = byId.get(r.serverRequestId ?? '');
        expect(t, `server record for ${r.serverRequestId}`).toBeDefined();
        const first = (t!.writesMs[0] as number) + toClient;
        const last = (t!.writesMs[TOKENS - 1] as number) + toClient;
        ttftErr.push(r.ttftMs! - (first - r.sentAtMs));
        itlErr.push(r.itlMs! - (last - first) / (TOKENS - 1));
      }
      expect(Math.abs(median(ttftErr))).toBeLessThan(10);
      expect(Math.abs(median(itlErr))).toBeLessThan(10);
      // And the server kept its nominal delays, loosely (its timers are not the client's business).
      const served = measured.map((r) => byId.get(r.serverRequestId ?? '')!);
      const serverTtft = median(served.map((t) => (t.writesMs[0] as number) - t.receivedAtMs));
      const serverItl = median(served.map((t) => ((t.writesMs[TOKENS - 1] as number) - (t.writesMs[0] as number)) / (TOKENS - 1)));
      expect(Math.abs(serverTtft - TTFT)).toBeLessThan(40);
      expect(Math.abs(serverItl - ITL)).toBeLessThan(10);
      expect(Math.abs(m.itlMs!.median - ITL)).toBeLessThan(10);
      expect(row!.meanConcurrency).toBeGreaterThan(80);
    });
  }
});

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
