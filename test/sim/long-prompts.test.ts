/** Issue 11 regressions in virtual time: long prompts per engine, over-length requests, counting, engine names. */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  type BatchSummary, createVirtualStageRunner, Engine, resolveSimEngine, VirtualDriver,
} from '../../src/sim/index.js';
import { countTextTokens } from '../../src/sim/wire/index.js';
import { runCli } from '../helpers/cli.js';
import { fixedWorkload } from './helpers.js';

const MODEL = { model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };

/** One request alone on `engine`; the prefill batches the cost model priced; a hang fails after `maxEvents`. */
function single(engine: string, prompt: number, output: number, maxEvents = 10_000) {
  const r = resolveSimEngine({ engine, ...MODEL });
  const batches: BatchSummary[] = [];
  const cost = Object.create(r.config.cost) as typeof r.config.cost;
  cost.stepMs = (b: BatchSummary) => {
    if (b.prefillCount > 0) batches.push({ ...b, prefillTokens: b.prefillTokens.slice(0, b.prefillCount) });
    return r.config.cost.stepMs(b);
  };
  const driver = new VirtualDriver();
  const eng = new Engine({ ...r.config, cost }, driver);
  const times: number[] = [];
  let finish: string | undefined;
  eng.submit({ promptTokens: prompt, maxTokens: output, ignoreEos: true }, { onToken: (_i, at) => void times.push(at), onFinish: (f) => void (finish = f) });
  let n = 0;
  driver.runWhile(() => n++ < maxEvents);
  return { times, finish, batches, pending: driver.pending, description: r.description };
}

describe('issue 11: long prompts and context limits', () => {
  it('11a SGLang prefills a prompt over --chunked-prefill-size (8192) in chunks and answers', () => {
    for (const prompt of [8200, 20_000]) {
      const s = single('sglang', prompt, 16);
      expect(s.pending, `${prompt}: the engine is still spinning`).toBe(0);
      expect(s.finish).toBe('length');
      expect(s.times).toHaveLength(16);
      expect(s.batches.map((b) => b.prefillTokens[0])).toEqual(
        Array.from({ length: Math.ceil(prompt / 8192) }, (_, i) => Math.min(8192, prompt - i * 8192)),
      );
      expect(s.times[0]).toBeGreaterThan(single('sglang', 8000, 16).times[0] as number);
    }
  });

  it('11b/11e TGI 3.x: a prompt over 4,096 tokens is prefilled (chunked under max_batch_prefill_tokens), not aborted', () => {
    const d = resolveSimEngine({ engine: 'tgi', ...MODEL });
    expect(d.description.engineLabel).toMatch(/^TGI 3\./);
    expect(d.description.maxModelLen).toBeLessThanOrEqual(d.description.kvTokens);
    const s = single('tgi', 4200, 128);
    expect(s.finish).toBe('length');
    expect(s.times).toHaveLength(128);
    const long = single('tgi', d.description.maxNumBatchedTokens + 5000, 8);
    expect(long.finish).toBe('length');
    expect(long.batches.length).toBe(2);
  });

  it('11b predict fails a TGI request over max_total_tokens with TGI\'s 422 validation error', async () => {
    const runner = createVirtualStageRunner({ engine: 'tgi', ...MODEL }, { seed: 1 });
    const limit = runner.description.maxModelLen;
    const res = await runner.runStage({ kind: 'closed', concurrency: 1, label: 'long', limits: { maxRequests: 3 }, workload: fixedWorkload(limit - 100, 128) }, 0, 0);
    expect(res.records).toHaveLength(3);
    for (const rec of res.records) {
      expect(rec.status).toBe('error');
      expect(rec.outputTokens).toBe(0);
      expect(rec.error).toEqual({
        code: 'E_HTTP_STATUS', httpStatus: 422,
        message: `HTTP 422: Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= ${limit}. Given: ${limit - 100} \`inputs\` tokens and 128 \`max_new_tokens\``,
      });
    }
  });

  it('11c a closed loop of over-length prompts neither overflows the stack nor stands still in virtual time', async () => {
    const runner = createVirtualStageRunner({ engine: 'vllm', ...MODEL }, { seed: 1 });
    const res = await runner.runStage({ kind: 'closed', concurrency: 4, label: 'c4', limits: { maxSeconds: 2 }, workload: fixedWorkload(200_000, 128) }, 0, 0);
    expect(res.records.length).toBeGreaterThan(4);
    expect(res.endedAtMs).toBeGreaterThan(res.startedAtMs);
    for (const rec of res.records) {
      expect(rec.error?.httpStatus).toBe(400);
      expect(rec.error?.message).toBe(
        "HTTP 400: This model's maximum context length is 32768 tokens. However, your request has 200000 input tokens. Please reduce the length of the input messages.",
      );
      // Refused after the front's ingest time (no e2eMs: a failed request has none, as in real runs).
      expect(rec.endAtMs - rec.sentAtMs).toBeGreaterThan(0);
    }
  });

  it('11c predict checks the lengths against the context first: exit 2, one line', async () => {
    const res = await runCli(['predict', '--prompt-tokens', '200000', '--profile', 'concurrent', '--concurrency', '4'], { timeoutMs: 60_000 });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: prompt 200000 \+ output 128 tokens do not fit the 32768-token context \(max_model_len\) of Qwen2-7B-Instruct on vllm: .*lower --prompt-tokens\/--output-tokens so that prompt \+ output ≤ 32768/);
  });

  it('11d counts prompts over 200k characters exactly, as shorter ones', () => {
    const words = ['alpha', 'beta,', 'gamma.', 'delta\n', '  epsilon', "it's", '1234567', 'résumé', '(x)', 'naïve'];
    let text = '';
    for (let i = 0; text.length < 260_000; i++) text += (i ? ' ' : '') + (words[(i * 7 + (i >> 2)) % words.length] as string);
    expect(countTextTokens(text)).toBe(countTokens(text));
    expect(countTextTokens(text.slice(0, 5000))).toBe(countTokens(text.slice(0, 5000)));
  });

  it('11c run against the built-in simulator checks the lengths before starting it: exit 2, one line', async () => {
    const res = await runCli(['run', '--engine', 'tgi', '--prompt-tokens', '50000', '--profile', 'synchronous', '--max-requests', '2', '--no-progress'], { timeoutMs: 60_000 });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain('do not fit the 32768-token context (max_total_tokens) of Qwen2-7B-Instruct on tgi: every request would fail with HTTP 422 (Input validation error:');
  });

  it('11c warns as vLLM would when max_model_len exceeds the KV cache; TGI lowers max_total_tokens instead', async () => {
    const { kvCapacityWarning } = await import('../../src/sim/limits.js');
    const small = { model: 'Llama-3.1-8B', gpu: 'RTX-4090', gpus: 1 };
    const v1 = resolveSimEngine({ engine: 'vllm', ...small });
    expect(v1.description.kvTokens).toBeLessThan(131_072);
    expect(kvCapacityWarning(v1)).toMatch(
      new RegExp(`^warning: vLLM would refuse to start: To serve at least one request with the model's max seq len \\(131072\\), \\(16\\.00 GiB KV cache is needed, which is larger than the available KV cache memory \\(\\d+\\.\\d\\d GiB\\)\\. Based on the available memory, the estimated maximum model length is ${v1.description.kvTokens}\\. Try increasing`),
    );
    expect(kvCapacityWarning(resolveSimEngine({ engine: 'sglang', ...small }))).toMatch(/^warning: the KV cache of Llama-3.1-8B on 1× RTX-4090 holds \d+ tokens, less than its 131072-token context/);
    const tgi = resolveSimEngine({ engine: 'tgi', ...small });
    expect(tgi.description.maxModelLen).toBe(tgi.description.kvTokens);
    expect(kvCapacityWarning(tgi)).toBeUndefined();
    expect(kvCapacityWarning(resolveSimEngine({ engine: 'vllm', ...MODEL }))).toBeUndefined();
  });

  it('11c the grid checks every cell', async () => {
    const { requestedShapes } = await import('../../src/cli/sim-limits.js');
    const { checkRequestFits } = await import('../../src/sim/limits.js');
    const opts = { profile: 'grid', inputLens: [128, 32_000], outputLens: [128, 1024], workload: {} } as unknown as Parameters<typeof requestedShapes>[0];
    const shapes = requestedShapes(opts);
    expect(shapes).toHaveLength(4);
    const r = resolveSimEngine({ engine: 'vllm', ...MODEL });
    const failure = (() => {
      try {
        for (const s of shapes) checkRequestFits(r, s);
      } catch (err) {
        return err as { message: string; hint?: string };
      }
      return undefined;
    })();
    expect(failure?.message).toMatch(/^prompt 32000 \+ output 1024 tokens do not fit the 32768-token context/);
    expect(failure?.hint).toMatch(/^lower --input-lens\/--output-lens/);
  });

  it('11f every engine name predict accepts is served by sim (vllm-v0 included)', async () => {
    const { SIM_ENGINE_NAMES } = await import('../../src/sim/engine/profiles.js');
    const { startSimServer } = await import('../../src/sim/server/index.js');
    expect(SIM_ENGINE_NAMES).toEqual(['vllm', 'vllm-legacy', 'vllm-v0', 'tgi', 'sglang', 'lmdeploy', 'llamacpp', 'trtllm', 'triton', 'mlc-llm', 'ollama']);
    // trtllm-serve and mlc_llm serve speak the OpenAI API (served by the vLLM-shaped writer).
    const openAi = new Set(['vllm-v0', 'trtllm', 'mlc-llm']);
    for (const engine of SIM_ENGINE_NAMES) {
      const server = await startSimServer({ engine, ...MODEL, port: 0 });
      try {
        expect(resolveSimEngine({ engine, ...MODEL }).description.engine).toBe(server.description.engine);
        const info = (await (await fetch(`${server.url}/sim/v1/info`)).json()) as { wire: string };
        expect(info.wire).toBe(openAi.has(engine) ? 'vllm' : engine);
      } finally {
        await server.close();
      }
    }
  });
});
