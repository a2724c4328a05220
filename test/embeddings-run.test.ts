import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRunOptions, type RawRunFlags } from '../src/config/run-options.js';
import type { RequestRecord } from '../src/metrics/record.js';
import type { RunSummaryDoc } from '../src/report/run-summary.js';
import { startSimServer, type SimServer } from '../src/sim/server/index.js';
import { runCli } from './helpers/cli.js';
import { runInProcess } from './helpers/run-in-process.js';

/** Flags as commander hands them over (defaulted flags present, marked as not typed). */
function resolve(typed: RawRunFlags): ReturnType<typeof resolveRunOptions> {
  return resolveRunOptions({ profile: 'sweep', arrival: 'constant', sweepRates: '9', profileExplicit: typed.profile !== undefined, ...typed }, {}, undefined, []);
}
function problem(typed: RawRunFlags): string {
  try {
    resolve(typed);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`no problem reported for ${JSON.stringify(typed)}`);
}

const outDir = (): string => join(mkdtempSync(join(tmpdir(), 'emb-')), 'run');
/** A run's measured records: cool-down ones (`cooldown: true`, sent after the window closed, the last cancelled) are left out. */
const records = (dir: string): RequestRecord[] =>
  readFileSync(join(dir, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord).filter((r) => r.cooldown !== true);
const common = ['--tokenizer', 'approx', '--no-progress', '--prompt-tokens', '64'];

describe('embeddings flags', () => {
  it('an embeddings API implies no output, no stream, --batch-size inputs per request', () => {
    const o = resolve({ api: 'openai-embeddings', batchSize: '8', target: 'http://127.0.0.1:9' });
    expect(o).toMatchObject({ batchSize: 8, outputTokens: 0, stream: false, forceLength: false });
    expect(resolve({ api: 'openai-embeddings', target: 'http://127.0.0.1:9' }).batchSize).toBe(1);
    expect(resolve({ api: 'openai-chat' }).batchSize).toBeUndefined();
  });

  it('refuses what cannot mean anything for embeddings, one problem each', () => {
    const emb = { api: 'openai-embeddings', target: 'http://127.0.0.1:9' };
    expect(problem({ ...emb, slo: 'ttft:200,e2e:900' })).toMatch(/^--slo ttft: openai-embeddings replies are vectors.*use --slo e2e:MS|limit the latency with --slo e2e:MS/);
    expect(problem({ ...emb, slo: 'itl:20' })).toContain('--slo itl:');
    expect(problem({ ...emb, reasoningFormat: 'think-tags' })).toContain('--reasoning-format think-tags');
    expect(problem({ ...emb, turns: '3' })).toContain('--turns');
    expect(problem({ ...emb, outputTokens: '64' })).toContain('--output-tokens/--output-dist');
    expect(problem({ ...emb, profile: 'grid', inputLens: '64', outputLens: '8' })).toContain('--profile grid crosses prompt and output lengths');
    expect(problem({ ...emb, batchSize: '0' })).toContain('--batch-size');
    expect(problem({ api: 'openai-chat', batchSize: '4' })).toBe('--batch-size sets the inputs per embeddings request; it goes with --api openai-embeddings or tei-embeddings');
    expect(problem({ api: 'tei-embeddings' })).toContain('--api tei-embeddings needs --target');
    expect(problem({ api: 'openai-embeddings', engine: 'lmdeploy' })).toContain('--engine lmdeploy: that engine serves no /v1/embeddings');
    // e2e limits are what an embeddings SLO is made of.
    expect(resolve({ ...emb, slo: 'e2e:500' }).slo).toEqual({ e2eMs: 500 });
  });

  it('a mistake is one line and exit 2 from the CLI', async () => {
    const r = await runCli(['run', '--api', 'openai-embeddings', '--slo', 'ttft:100', '--out', outDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: --slo ttft: openai-embeddings replies are vectors/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});

// The runs below go in this process (runInProcess: run's own flag parsing and command); the one spawned CLI of this
// file is the mistake above, where the process's exit code and stderr are what is tested.
describe('run --api openai-embeddings against the simulator (real loopback HTTP)', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSimServer({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1, seed: 3, modelTimeScale: 0.2 });
  });
  afterAll(async () => sim.close());

  it('constant rate, batches of 4: every request succeeds with the server\'s prompt token count, no TTFT/ITL', async () => {
    const out = outDir();
    // 60 req/s: the 30 requests go out in half a second (nothing below depends on the rate).
    const r = await runInProcess(['--target', sim.url, '--api', 'openai-embeddings', '--batch-size', '4', '--rate', '60', '--max-requests', '30', '--out', out, ...common]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummaryDoc;
    const s = doc.stages[0];
    expect(s?.requests.errors).toBe(0);
    expect(s?.requests.ok).toBeGreaterThanOrEqual(30);
    expect(s?.inputsPerRequest).toBe(4);
    expect(s?.inputThroughput).toBeCloseTo((s?.requestThroughput ?? 0) * 4, 6);
    expect(s?.promptTokenThroughput).toBeGreaterThan(0);
    expect(s?.metrics.ttftMs).toBeUndefined();
    expect(s?.metrics.itlMs).toBeUndefined();
    expect(s?.metrics.e2eMs?.count).toBe(s?.requests.ok);
    expect(doc.workloadSpec).toMatchObject({ inputsPerRequest: 4, stream: false });
    // The server's own count of every request: the sum over its inputs, as the sim's tokenizer counts them.
    const truth = new Map(sim.truth.finished().map((t) => [String(t.id), t]));
    for (const rec of records(out)) {
      expect(rec).toMatchObject({ status: 'ok', inputCount: 4, outputTokens: 0, promptTokenSource: 'server-usage', tokenCountSource: 'server-usage', chunks: 0 });
      expect(rec.ttftMs).toBeUndefined();
      expect(rec.promptTokens).toBe(truth.get(rec.serverRequestId as string)?.promptTokens);
      expect(Math.abs(rec.promptTokens - rec.clientPromptTokens)).toBeLessThanOrEqual(8);
    }
    // The table speaks in requests, inputs and input tokens; no TTFT or ITL column.
    expect(r.stdout).toMatch(/req\/s \| Inputs\/s \| Input tok\/s \| E2E \(ms\)/);
    expect(r.stdout).not.toContain('TTFT');
    expect(readFileSync(join(out, 'table.md'), 'utf8')).toContain('| Inputs per Second |');
    expect(readFileSync(join(out, 'table.csv'), 'utf8').split('\n')[0]).toMatch(/,inputs_per_request,inputs_per_s$/);
  }, 120_000);

  it('sweep (synchronous, a rate, throughput) and concurrent rows all measure', async () => {
    const out = outDir();
    // Half-second rows, the throughput row at most 16 streams: which rows there are and that each measures is the point.
    const r = await runInProcess(['--target', sim.url, '--api', 'openai-embeddings', '--batch-size', '2', '--sweep-rates', '1', '--max-seconds', '0.5', '--max-concurrency', '16', '--out', out, '--json', ...common]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as RunSummaryDoc;
    expect(doc.stages.map((s) => s.label)).toEqual(['synchronous', 'throughput', expect.stringMatching(/^asynchronous@/)]);
    for (const s of doc.stages) expect(s).toMatchObject({ inputsPerRequest: 2, requests: { errors: 0 } });
    const c = await runInProcess(['--target', sim.url, '--api', 'openai-embeddings', '--concurrency', '1,4', '--max-requests', '12', '--out', outDir(), '--json', ...common]);
    expect(c.code, c.stderr).toBe(0);
    const rows = (JSON.parse(c.stdout) as RunSummaryDoc).stages;
    expect(rows.map((s) => s.label)).toEqual(['concurrent@1', 'concurrent@4']);
    // Every request of both rows succeeded, each with an input throughput. (That 4 streams embed more texts per second
    // than 1 is a timing figure — a loaded 2-core CI machine measured 131 vs 134 — so it is not asserted here.)
    for (const row of rows) {
      expect(row.requests.ok).toBeGreaterThan(0);
      expect(row.requests.errors).toBe(0);
      expect(row.inputThroughput).toBeGreaterThan(0);
    }
  }, 180_000);

  it('capacity with an e2e SLO answers in streams', async () => {
    const out = outDir();
    const r = await runInProcess(['--target', sim.url, '--api', 'openai-embeddings', '--batch-size', '4', '--profile', 'capacity', '--capacity-axis', 'concurrency', '--slo', 'e2e:150', '--max-seconds', '1', '--out', out, '--json', ...common]);
    // One stream of 4 × 64-token texts takes ~10 ms at this time scale: the search finds a stream count, exit 0.
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as RunSummaryDoc;
    expect(doc.capacity?.verdict).toMatch(/^capacity: \d+ streams? .*e2e ≤ 150 ms/);
    expect(doc.capacity?.feasibleMax as number).toBeGreaterThanOrEqual(2);
    expect(doc.capacity?.firstBreach as number).toBeGreaterThan(doc.capacity?.feasibleMax as number);
    expect(doc.stages.every((s) => s.inputsPerRequest === 4)).toBe(true);
  }, 180_000);
});

describe('run --api tei-embeddings against a TEI-shaped server', () => {
  let server: Server;
  let url: string;
  let withHeader = true;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/embed') {
          res.writeHead(404, { 'content-type': 'application/json' });
          return res.end('{"error":"not found","error_type":"empty"}');
        }
        const { inputs } = JSON.parse(raw) as { inputs: string[] };
        // TEI counts tokens itself; this one says 10 per input, whatever the text.
        res.writeHead(200, { 'content-type': 'application/json', ...(withHeader ? { 'x-compute-tokens': String(10 * inputs.length) } : {}) });
        res.end(JSON.stringify(inputs.map(() => [0.1, -0.2, 0.3])));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((r) => server.close(() => r())));

  it('takes prompt tokens from x-compute-tokens, and from the client\'s count when the header is missing', async () => {
    const out = outDir();
    const args = ['--target', url, '--api', 'tei-embeddings', '--model', 'bge', '--batch-size', '3', '--concurrency', '2', '--max-requests', '6', ...common];
    const r = await runInProcess([...args, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(records(out)).toHaveLength(6);
    for (const rec of records(out)) expect(rec).toMatchObject({ status: 'ok', promptTokens: 30, promptTokenSource: 'server-details', inputCount: 3 });
    withHeader = false;
    const out2 = outDir();
    expect((await runInProcess([...args, '--out', out2])).code).toBe(0);
    expect(records(out2)).toHaveLength(6);
    for (const rec of records(out2)) expect(rec).toMatchObject({ status: 'ok', promptTokenSource: 'client-tokenizer', promptTokens: rec.clientPromptTokens });
  }, 120_000);
});

describe('between rows, without /metrics', () => {
  it('after a row that cut requests, an embeddings probe times the whole reply against the synchronous latency', async () => {
    // One request at a time, 20 ms each, and requests the client gave up on are still worked through (a real queue).
    const queue: Array<() => void> = [];
    let busy = false;
    const next = (): void => {
      const job = queue.shift();
      if (!job) return void (busy = false);
      busy = true;
      setTimeout(() => {
        job();
        next();
      }, 20);
    };
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') {
          res.writeHead(404);
          return res.end();
        }
        const { inputs } = JSON.parse(raw) as { inputs: string[] };
        queue.push(() => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json', 'x-compute-tokens': String(10 * inputs.length) });
          res.end(JSON.stringify(inputs.map(() => [0.5])));
        });
        if (!busy) next();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const out = outDir();
      // Half-second rows and at most 16 streams in the throughput row: its ramp-up no longer queues ~200 requests
      // (4 s of this server's time) before the row starts, and it still leaves the queue with cut requests.
      const r = await runInProcess(['--target', url, '--api', 'tei-embeddings', '--model', 'bge', '--profile', 'sweep', '--sweep-rates', '1',
        '--max-seconds', '0.5', '--max-concurrency', '16', '--drain', '0', '--idle-wait', '10', '--out', out, '--json', ...common]);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as RunSummaryDoc;
      const [sync, throughput, rate] = doc.stages;
      expect(sync?.label).toBe('synchronous');
      expect(throughput?.requests.incomplete).toBeGreaterThan(0);
      // The rate row waited for the queue the throughput row left, by probing with an embeddings request; the wait
      // says which row cut how many requests: every record of that row cut, measured, ramp-up or cool-down.
      const cut = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord)
        .filter((rec) => rec.stage === throughput?.index && rec.status === 'incomplete').length;
      expect(cut).toBeGreaterThan(0);
      expect(rate?.idleWait?.idle).toBe(true);
      expect(rate?.idleWait?.method).toMatch(
        new RegExp(`^after throughput cut ${cut} request${cut === 1 ? '' : 's'}: until a one-token probe's latency was back to the synchronous level \\(probe latency \\d+ ms, within 1\\.5× the synchronous \\d+ ms\\)$`),
      );
      expect(rate?.idleWait?.waitedS as number).toBeGreaterThan(0.05);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 120_000);
});
