/**
 * Property test in virtual time: for every engine, prompts from 1 token to past the context and a range of
 * output lengths, each request either completes with plausible timing or fails with the engine's own
 * error. A step bound turns a scheduler that spins (the SGLang > 8,192-token hang) into a failure.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { Engine, resolveSimEngine, SimRejectedError, VirtualDriver, type ResolvedSimEngine } from '../../src/sim/index.js';
import { SIM_ENGINE_NAMES } from '../../src/sim/engine/profiles.js';
import type { SimEngineKind } from '../../src/sim/wire/types.js';

interface Outcome {
  rejected?: { status: number; message: string };
  tokens: number[];
  finish?: string;
  sentAt: number;
}

/** The error each engine's front gives for a request over its context (status, message pattern). */
const REAL_ERROR: Record<SimEngineKind, { status: number; message: RegExp } | undefined> = {
  vllm: { status: 400, message: /^(This model's maximum context length is \d+ tokens\. However, your request has \d+ input tokens|'max_tokens' or 'max_completion_tokens' is too large: \d+\. This model's maximum context length is \d+ tokens)/ },
  'vllm-legacy': { status: 500, message: /^Internal Server Error$/ },
  tgi: { status: 422, message: /^Input validation error: `inputs` (tokens \+ `max_new_tokens` must be <= \d+\. Given: \d+ `inputs` tokens and \d+ `max_new_tokens`|must have less than \d+ tokens\. Given: \d+)$/ },
  sglang: { status: 400, message: /(is longer than the model's context length|exceeds the model's maximum context length of \d+ tokens)/ },
  lmdeploy: { status: 400, message: /^The input token length \d+ plus max_tokens \d+ exceeds the session length \d+\.$/ },
  triton: { status: 400, message: /^Prompt length \(\d+\) plus max_tokens \(\d+\) exceeds the maximum sequence length \(\d+\)$/ },
  llamacpp: { status: 400, message: /^the request exceeds the available context size, try increasing it$/ },
  ollama: undefined, // truncates the prompt, never refuses
};

/** Engines whose front caps the output at the context instead of refusing it. */
const CLAMPS_OUTPUT = new Set<SimEngineKind>(['vllm-legacy', 'llamacpp', 'ollama']);

/** Runs the driver at most `maxEvents` events; true when everything finished (nothing left to do). */
function runBounded(driver: VirtualDriver, maxEvents: number): boolean {
  let n = 0;
  driver.runWhile(() => n++ < maxEvents);
  return driver.pending === 0;
}

function submit(engine: Engine, driver: VirtualDriver, prompt: number, output: number): Outcome {
  const o: Outcome = { tokens: [], sentAt: driver.now() };
  try {
    engine.submit({ promptTokens: prompt, maxTokens: output, ignoreEos: true }, {
      onToken: (_i, at) => void o.tokens.push(at),
      onFinish: (reason) => void (o.finish = reason),
    });
  } catch (err) {
    if (!(err instanceof SimRejectedError)) throw err;
    o.rejected = { status: err.status, message: err.message };
  }
  return o;
}

/** A fresh engine with the HTTP front's length rules, as predict builds it. */
function engineFor(r: ResolvedSimEngine, seed: number): { engine: Engine; driver: VirtualDriver } {
  const driver = new VirtualDriver();
  return { engine: new Engine({ ...r.config, seed, admit: r.admit }, driver), driver };
}

/** Either the engine's real refusal, or a completed request with every token after a positive TTFT and positive gaps. */
function checkOutcome(kind: SimEngineKind, limit: number, prompt: number, output: number, o: Outcome, label: string): void {
  const real = REAL_ERROR[kind];
  if (o.rejected) {
    expect(real, `${label}: ${kind} never refuses, got ${o.rejected.status} ${o.rejected.message}`).toBeDefined();
    expect(o.rejected.status, label).toBe(real?.status);
    expect(o.rejected.message, label).toMatch(real?.message as RegExp);
    return;
  }
  expect(o.finish, `${label}: must finish by length, not abort`).toBe('length');
  const fits = Math.min(prompt, limit - 1);
  const want = CLAMPS_OUTPUT.has(kind) ? Math.min(output, limit - fits) : output;
  expect(o.tokens.length, label).toBe(want);
  expect((o.tokens[0] as number) - o.sentAt, `${label}: TTFT`).toBeGreaterThan(0);
  for (let i = 1; i < o.tokens.length; i++) expect((o.tokens[i] as number) - (o.tokens[i - 1] as number), `${label}: ITL`).toBeGreaterThan(0);
}

const MODEL = { model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 };

describe('every engine, every prompt length: completes plausibly or fails with the engine\'s error', () => {
  for (const name of SIM_ENGINE_NAMES) {
    it(`${name}: one request at a time, prompts 1 … beyond the context`, () => {
      const r = resolveSimEngine({ engine: name, ...MODEL });
      const kind = r.profile.wire;
      const limit = r.description.maxModelLen;
      const budget = r.description.maxNumBatchedTokens;
      const rng = new Rng(17);
      const prompts = [
        1, 2, 100, 1000, 4095, 4096, 4097, 4200, 8191, 8192, 8200, 16385, budget + 1, limit - 600, limit - 1, limit, limit + 1, 2 * limit,
        ...Array.from({ length: 4 }, () => rng.int(1, limit + 2000)),
      ].filter((p) => p >= 1);
      for (const output of [1, 2, 64, 700]) {
        const ttft: { prompt: number; ms: number }[] = [];
        for (const prompt of prompts) {
          const label = `${name} prompt ${prompt} output ${output}`;
          const { engine, driver } = engineFor(r, 1);
          const o = submit(engine, driver, prompt, output);
          // Prefill chunks plus one step per token, with room to spare: more events than this is a hang.
          const bound = 20 * (Math.ceil(prompt / 512) + output) + 200;
          expect(runBounded(driver, bound), `${label}: still running after ${bound} events`).toBe(true);
          checkOutcome(kind, limit, prompt, output, o, label);
          if (!o.rejected) ttft.push({ prompt: Math.min(prompt, limit - 1), ms: (o.tokens[0] as number) - o.sentAt });
        }
        // TTFT grows with the prompt (alone on the engine, no noise): never shorter for a longer prompt.
        ttft.sort((a, b) => a.prompt - b.prompt);
        for (let i = 1; i < ttft.length; i++) {
          const [a, b] = [ttft[i - 1], ttft[i]] as [{ prompt: number; ms: number }, { prompt: number; ms: number }];
          if (b.prompt > a.prompt) expect(b.ms, `${name} output ${output}: TTFT(${b.prompt}) vs TTFT(${a.prompt})`).toBeGreaterThanOrEqual(a.ms);
        }
        const first = ttft[0] as { ms: number };
        const last = ttft.at(-1) as { prompt: number; ms: number };
        expect(last.prompt, `${name}: long prompts must be served`).toBeGreaterThan(16_000);
        expect(last.ms, `${name}: a ${last.prompt}-token prompt must take longer than a 1-token one`).toBeGreaterThan(first.ms * 5);
      }
    });

    it(`${name}: a seeded mix of lengths at once (long chunked prefills among decodes) finishes`, () => {
      const r = resolveSimEngine({ engine: name, ...MODEL });
      const limit = r.description.maxModelLen;
      const rng = new Rng(name.length * 31 + 5);
      const { engine, driver } = engineFor(r, 2);
      const shapes: { prompt: number; output: number; o?: Outcome }[] = [];
      let events = 0;
      for (let i = 0; i < 24; i++) {
        const prompt = rng.next() < 0.3 ? rng.int(8000, limit + 4000) : rng.int(1, 3000);
        const output = rng.int(1, 400);
        const s: { prompt: number; output: number; o?: Outcome } = { prompt, output };
        shapes.push(s);
        // Arrivals spread over time: some land mid-prefill of a long prompt.
        driver.schedule(i * 40, () => void (s.o = submit(engine, driver, prompt, output)));
        events += 20 * (Math.ceil(prompt / 512) + output);
      }
      expect(runBounded(driver, events + 1000), `${name}: still running`).toBe(true);
      for (const s of shapes) checkOutcome(r.profile.wire, limit, s.prompt, s.output, s.o as Outcome, `${name} ${s.prompt}/${s.output} in a mix`);
      expect(shapes.some((s) => s.o && !s.o.rejected && s.prompt > 8192)).toBe(true);
    });
  }
});
