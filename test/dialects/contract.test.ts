import { describe, expect, it } from 'vitest';
import type { ApiName, GenerationRequest, UsageInfo } from '../../src/dialects/types.js';
import { type Outcome, fixture, request, run, runSliced } from './_run.js';

interface Case {
  file: string;
  api: ApiName;
  req?: Partial<GenerationRequest>;
  text: string;
  tokens?: number;
  usage?: UsageInfo;
  finishReason?: string;
  done: Outcome['done'];
  error?: { message: string; type?: string };
}

const su = (promptTokens: number, outputTokens: number, cachedTokens?: number): UsageInfo =>
  cachedTokens === undefined
    ? { promptTokens, outputTokens, source: 'server-usage' }
    : { promptTokens, outputTokens, cachedTokens, source: 'server-usage' };

const whole = { stream: false };

/** Every recorded stream, what a consumer must get out of it. */
const cases: Case[] = [
  { file: 'vllm-completions-v0.11.sse', api: 'openai-completions', text: ' world, how', usage: su(2, 3), finishReason: 'length', done: 'frame' },
  { file: 'vllm-chat-main.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3), finishReason: 'length', done: 'frame' },
  {
    file: 'vllm-midstream-error.sse',
    api: 'openai-chat',
    text: '',
    done: 'frame',
    error: { message: 'Internal server error', type: 'InternalServerError' },
  },
  { file: 'vllm-completions-nonstream.json', api: 'openai-completions', req: whole, text: ' world, how', usage: su(2, 3), finishReason: 'length', done: 'frame' },
  { file: 'vllm-legacy-v0.2.nul', api: 'vllm', text: ' world, how', done: 'end' },
  { file: 'vllm-legacy-v0.6.4.derived.ndjson', api: 'vllm', text: ' world, how', done: 'end' },
  { file: 'vllm-legacy-nonstream.json', api: 'vllm', req: whole, text: ' world, how', done: 'frame' },
  {
    file: 'tgi-generate-stream-v1.3.4.sse',
    api: 'tgi',
    text: ' world, how',
    tokens: 3,
    usage: { outputTokens: 3, source: 'server-details' },
    finishReason: 'length',
    done: 'frame',
  },
  {
    file: 'tgi-generate-stream-v3.3.7.sse',
    api: 'tgi',
    text: ' world, how',
    tokens: 3,
    usage: { outputTokens: 3, promptTokens: 2, source: 'server-details' },
    finishReason: 'length',
    done: 'frame',
  },
  {
    file: 'tgi-generate-stream-keepalive.derived.sse',
    api: 'tgi',
    text: ' world, how',
    tokens: 3,
    usage: { outputTokens: 3, promptTokens: 2, source: 'server-details' },
    finishReason: 'length',
    done: 'frame',
  },
  {
    file: 'tgi-generate-nonstream.json',
    api: 'tgi',
    req: whole,
    text: ' world, how',
    usage: { outputTokens: 3, source: 'server-details' },
    finishReason: 'length',
    done: 'frame',
  },
  {
    file: 'tgi-generate-stream-error.derived.sse',
    api: 'tgi',
    text: '',
    done: 'never',
    error: {
      message:
        'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 1900 `inputs` tokens and 200 `max_new_tokens`',
      type: 'validation',
    },
  },
  { file: 'tgi-chat-v3.3.7.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3), finishReason: 'length', done: 'frame' },
  { file: 'sglang-generate.sse', api: 'sglang', text: ' world, how', tokens: 3, usage: su(2, 3, 0), finishReason: 'length', done: 'frame' },
  { file: 'sglang-completions.sse', api: 'openai-completions', text: ' world, how', usage: su(2, 3), finishReason: 'length', done: 'frame' },
  { file: 'sglang-chat.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3), finishReason: 'length', done: 'frame' },
  {
    file: 'sglang-generate-error.derived.sse',
    api: 'sglang',
    text: '',
    done: 'frame',
    error: { message: "The input (5000 tokens) is longer than the model's context length (4096 tokens)." },
  },
  { file: 'lmdeploy-chat-v0.6.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3), finishReason: 'length', done: 'frame' },
  { file: 'lmdeploy-chat-v0.16.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3, 0), finishReason: 'length', done: 'frame' },
  { file: 'lmdeploy-generate.sse', api: 'lmdeploy', text: ' world, how', tokens: 3, usage: su(2, 3), finishReason: 'length', done: 'frame' },
  { file: 'llamacpp-completion.sse', api: 'llamacpp', text: ' world, how', tokens: 3, usage: su(2, 3, 0), finishReason: 'length', done: 'frame' },
  { file: 'llamacpp-chat.sse', api: 'openai-chat', text: 'Hello! How', usage: su(37, 3), finishReason: 'length', done: 'frame' },
  {
    file: 'llamacpp-completion-error-field.derived.sse',
    api: 'llamacpp',
    text: ' world',
    tokens: 1,
    done: 'never',
    error: { message: 'failed to decode the batch', type: 'server_error' },
  },
  { file: 'triton-generate-stream.sse', api: 'triton', text: ' world, how', done: 'end' },
  { file: 'triton-generate-nonstream.json', api: 'triton', req: whole, text: ' world, how', done: 'frame' },
  { file: 'triton-generate-nonstream-echo.derived.json', api: 'triton', req: whole, text: ' world, how', done: 'frame' },
  { file: 'ollama-generate.ndjson', api: 'ollama', text: ' world, how', usage: su(2, 3), finishReason: 'length', done: 'frame' },
  { file: 'ollama-chat.ndjson', api: 'ollama', text: 'Hello! How', usage: su(27, 3), finishReason: 'length', done: 'frame' },
  {
    file: 'ollama-generate-escapes.derived.ndjson',
    api: 'ollama',
    text: '<think> a & b</think> world, how',
    usage: su(2, 3),
    finishReason: 'length',
    done: 'frame',
  },
  {
    file: 'ollama-generate-error.derived.ndjson',
    api: 'ollama',
    text: ' world',
    done: 'never',
    error: { message: 'an error was encountered while running the model: unexpected EOF' },
  },
  { file: 'openai-chat.sse', api: 'openai-chat', text: 'Hello! How', usage: su(9, 3, 0), finishReason: 'length', done: 'frame' },
  { file: 'openai-chat-crlf.derived.sse', api: 'openai-chat', text: 'Hello! How', usage: su(9, 3, 0), finishReason: 'length', done: 'frame' },
];

describe('recorded streams through each dialect', () => {
  for (const c of cases) {
    it(`${c.api} ← ${c.file}`, () => {
      const req = request(c.req);
      const results = runSliced(c.api, req, fixture(c.file));
      const expected: Outcome = { text: c.text, done: c.done, errors: c.error === undefined ? [] : [c.error], afterDone: 0 };
      if (c.tokens !== undefined) expected.tokens = c.tokens;
      if (c.usage !== undefined) expected.usage = c.usage;
      if (c.finishReason !== undefined) expected.finishReason = c.finishReason;
      for (const r of results) expect(r).toEqual(expected);
    });
  }
});

/** Streams whose format has a final event: a body cut anywhere before it must never read as done. */
describe('truncated streams are recognisable', () => {
  const withFinalEvent = cases.filter((c) => c.done === 'frame' && c.error === undefined && c.req === undefined);
  for (const c of withFinalEvent) {
    it(`${c.api} ← ${c.file} cut before the end`, () => {
      const bytes = fixture(c.file);
      const lastContent = c.text.slice(-3);
      // Cut just after the last text arrived (but before its finish/usage/[DONE]) and at several earlier points.
      const cuts = [Math.floor(bytes.length / 3), Math.floor(bytes.length / 2), cutAfter(bytes, lastContent)];
      for (const at of cuts) {
        const r = run(c.api, request(c.req), [bytes.subarray(0, at)]);
        expect(r.done, `cut at ${at}/${bytes.length}`).toBe('never');
        // A cut NDJSON record is still handed over at EOF and reads as a parse error: also never done.
        expect(r.errors.filter((e) => e.type !== 'parse')).toEqual([]);
      }
    });
  }

  it('formats without a final event cannot tell a cut body from a complete one (documented)', () => {
    const bytes = fixture('triton-generate-stream.sse');
    expect(run('triton', request(), [bytes.subarray(0, bytes.length / 2)]).done).toBe('end');
  });
});

/** Byte offset just past the first occurrence of `needle` in the body's text payloads. */
function cutAfter(bytes: Uint8Array, needle: string): number {
  const s = Buffer.from(bytes).toString('latin1');
  const i = s.indexOf(JSON.stringify(needle).slice(1, -1));
  return i === -1 ? Math.floor(bytes.length / 2) : i + needle.length;
}
