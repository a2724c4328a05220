import { describe, expect, it } from 'vitest';
import { dialects } from '../../src/dialects/index.js';
import type { ApiName, FrameEvent, GenerationRequest } from '../../src/dialects/types.js';
import { fixture, request, run } from './_run.js';

function feed(api: ApiName, payloads: string[], req?: GenerationRequest): (FrameEvent | null)[] {
  const parser = dialects[api].createParser(req);
  return payloads.map((p) => parser.frame(p, 'data'));
}

describe('openai parser', () => {
  it('role-only first chunks and null usage carry nothing', () => {
    expect(
      feed('openai-chat', [
        '{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}',
        '{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}',
        '{"choices":[{"index":0,"delta":{"reasoning_content":null,"role":"assistant","content":""},"finish_reason":null}]}',
      ]),
    ).toEqual([null, null, null]);
  });

  it('usage on the finishing content chunk (llama.cpp early 2025, lmdeploy 0.10–0.13)', () => {
    const [ev] = feed('openai-chat', [
      '{"choices":[{"index":0,"delta":{"content":" How"},"finish_reason":"length"}],"usage":{"prompt_tokens":37,"completion_tokens":3,"total_tokens":40}}',
    ]);
    expect(ev).toEqual({ text: ' How', finishReason: 'length', usage: { promptTokens: 37, outputTokens: 3, source: 'server-usage' } });
  });

  it('in-band errors in every documented shape', () => {
    const evs = feed('openai-chat', [
      '{"error": {"object": "error", "message": "bad thing", "type": "BadRequestError", "param": null, "code": 400}}',
      '{"object":"error","message":"flat","type":"BadRequestError","param":null,"code":400}',
      '{"error":{"message":"tgi says no","http_status_code":422}}',
      '{"error": {"message": "lm", "type": "server_error", "code": 500, "param": null, "object": "error"}}',
    ]);
    expect(evs).toEqual([
      { error: { message: 'bad thing', type: 'BadRequestError' } },
      { error: { message: 'flat', type: 'BadRequestError' } },
      { error: { message: 'tgi says no', type: '422' } },
      { error: { message: 'lm', type: 'server_error' } },
    ]);
  });

  it('an `error:` SSE field (older llama.cpp) and unparsable payloads', () => {
    const p = dialects['openai-completions'].createParser();
    expect(p.frame('{"code":500,"message":"boom","type":"server_error"}', 'error')).toEqual({
      error: { message: 'boom', type: 'server_error' },
    });
    expect(p.frame('{"choices":[', 'data')).toEqual({ error: { message: 'unparsable frame: {"choices":[', type: 'parse' } });
    expect(p.frame('42', 'data')?.error?.type).toBe('parse');
  });

  it("TGI completions' empty finish_reason is not a finish; reasoning text counts as generated text and is said apart", () => {
    expect(feed('openai-completions', ['{"choices":[{"index":0,"text":" world","logprobs":null,"finish_reason":""}]}'])).toEqual([
      { text: ' world' },
    ]);
    expect(feed('openai-chat', ['{"choices":[{"index":0,"delta":{"reasoning":"hmm","content":null},"finish_reason":null}]}'])).toEqual([
      { text: 'hmm', reasoning: 'hmm' },
    ]);
    expect(feed('openai-chat', ['{"choices":[{"index":0,"delta":{"reasoning_content":"so","content":" Yes"},"finish_reason":null}]}'])).toEqual([
      { text: 'so Yes', reasoning: 'so' },
    ]);
  });

  it('non-streaming chat body: text, usage with cached tokens, done', () => {
    const [ev] = feed(
      'openai-chat',
      [
        '{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"Hello! How"}}],"usage":{"completion_tokens":3,"prompt_tokens":37,"total_tokens":40,"prompt_tokens_details":{"cached_tokens":32}}}',
      ],
      request({ stream: false }),
    );
    expect(ev).toEqual({
      text: 'Hello! How',
      finishReason: 'length',
      usage: { promptTokens: 37, outputTokens: 3, cachedTokens: 32, source: 'server-usage' },
      done: true,
    });
  });

  it('a body cut after the finish chunk but before usage/[DONE] ends as done via end(), without usage', () => {
    const bytes = fixture('openai-chat.sse');
    const s = Buffer.from(bytes).toString('utf8');
    const at = Buffer.byteLength(s.slice(0, s.indexOf('"finish_reason":"length"')), 'utf8');
    const end = bytes.indexOf(0x0a, at) + 2;
    const r = run('openai-chat', request(), [bytes.subarray(0, end)]);
    expect(r).toMatchObject({ text: 'Hello! How', finishReason: 'length', done: 'end' });
    expect(r.usage).toBeUndefined();
  });
});

describe('sglang / lmdeploy native', () => {
  it('incremental-streaming-output mode (text and output_ids are deltas)', () => {
    const evs = feed('sglang', [
      '{"text":" world","output_ids":[1917],"meta_info":{"finish_reason":null,"prompt_tokens":2,"completion_tokens":1,"cached_tokens":0}}',
      '{"text":",","output_ids":[11],"meta_info":{"finish_reason":null,"prompt_tokens":2,"completion_tokens":2,"cached_tokens":0}}',
      '{"text":" how","output_ids":[1268],"meta_info":{"finish_reason":{"type":"stop","matched":128009},"prompt_tokens":2,"completion_tokens":3,"cached_tokens":1}}',
      '[DONE]',
    ]);
    expect(evs.map((e) => e?.text)).toEqual([' world', ',', ' how', undefined]);
    expect(evs[2]).toMatchObject({ tokens: 1, finishReason: 'stop', usage: { promptTokens: 2, outputTokens: 3, cachedTokens: 1 } });
    expect(evs[3]).toEqual({ done: true });
  });

  it('2024 builds without output_ids: cumulative text by prefix; several tokens in one event', () => {
    const evs = feed('sglang', [
      '{"text":" world,","meta_info":{"prompt_tokens":2,"completion_tokens":2,"completion_tokens_wo_jump_forward":2,"cached_tokens":0,"finish_reason":null,"id":"x"}}',
      '{"text":" world, how","meta_info":{"prompt_tokens":2,"completion_tokens":3,"completion_tokens_wo_jump_forward":3,"cached_tokens":0,"finish_reason":{"type":"length","length":3},"id":"x"}}',
    ]);
    expect(evs.map((e) => [e?.text, e?.tokens])).toEqual([
      [' world,', 2],
      [' how', 1],
    ]);
  });

  it('an abort finish reason is an error; a non-stream body is done', () => {
    const [abort] = feed('sglang', [
      '{"text":"","output_ids":[],"meta_info":{"finish_reason":{"type":"abort","message":"client gone","status_code":499},"prompt_tokens":2,"completion_tokens":0}}',
    ]);
    expect(abort?.error).toEqual({
      message: 'the server aborted the generation (finish reason "abort"): client gone (status 499)',
      type: 'abort',
      code: 'E_ABORTED_BY_SERVER',
    });
    const [whole] = feed(
      'lmdeploy',
      ['{"text":" world, how","output_ids":[1917,11,1268],"meta_info":{"prompt_tokens":2,"completion_tokens":3,"finish_reason":{"type":"length"}}}'],
      request({ stream: false }),
    );
    expect(whole).toEqual({
      text: ' world, how',
      tokens: 3,
      usage: { promptTokens: 2, outputTokens: 3, source: 'server-usage' },
      finishReason: 'length',
      done: true,
    });
  });
});

describe('llamacpp native', () => {
  it('2023–mid-2024 builds: sorted keys, stopped_* booleans, no tokens_predicted on partials', () => {
    const evs = feed('llamacpp', [
      '{"content":" world","id_slot":0,"multimodal":false,"stop":false}',
      '{"content":"","generation_settings":{},"model":"gpt-3.5-turbo-0613","prompt":"Hello","slot_id":0,"stop":true,"stopped_eos":true,"stopped_limit":false,"stopped_word":false,"stopping_word":"","timings":{"predicted_n":1,"prompt_n":2},"tokens_cached":3,"tokens_evaluated":2,"tokens_predicted":1,"truncated":false}',
    ]);
    expect(evs).toEqual([
      { text: ' world' },
      { tokens: 1, done: true, finishReason: 'stop', usage: { promptTokens: 2, outputTokens: 1, source: 'server-usage' } },
    ]);
  });

  it('non-stream body carries the whole content', () => {
    const [ev] = feed('llamacpp', [
      '{"index":0,"content":" world, how","tokens":[],"id_slot":0,"stop":true,"tokens_predicted":3,"tokens_evaluated":2,"stop_type":"limit","timings":{"cache_n":1,"prompt_n":1,"predicted_n":3}}',
    ]);
    expect(ev).toEqual({
      text: ' world, how',
      tokens: 3,
      done: true,
      finishReason: 'length',
      usage: { promptTokens: 2, outputTokens: 3, cachedTokens: 1, source: 'server-usage' },
    });
  });
});

describe('vllm legacy', () => {
  it('strips the echoed prompt only when the request is known; \\u escapes; first of n sequences', () => {
    const frames = ['{"text": ["Hello w\\u00f6rld", "Hello there"]}', '{"text": ["Hello w\\u00f6rld \\ud83d\\ude00", "x"]}'];
    expect(feed('vllm', frames, request()).map((e) => e?.text)).toEqual([' wörld', ' 😀']);
    expect(feed('vllm', frames).map((e) => e?.text)).toEqual(['Hello wörld', ' 😀']);
  });
});

describe('tgi native', () => {
  it('the EOS token counts but adds no text; compat array body', () => {
    const evs = feed('tgi', [
      '{"index":1,"token":{"id":1917,"text":" world","logprob":-1.2,"special":false},"generated_text":null,"details":null}',
      '{"index":2,"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},"generated_text":" world","details":{"finish_reason":"eos_token","generated_tokens":2,"seed":null,"input_length":2}}',
    ]);
    expect(evs[1]).toEqual({
      tokens: 1,
      done: true,
      finishReason: 'stop',
      usage: { outputTokens: 2, promptTokens: 2, source: 'server-details' },
    });
    expect(feed('tgi', ['[{"generated_text":" world"}]'])).toEqual([{ text: ' world', done: true }]);
  });
});

describe('ollama', () => {
  it('omitempty counts: missing eval_count is 0, missing prompt_eval_count stays unknown', () => {
    const [ev] = feed('ollama', ['{"model":"m","created_at":"2025-06-01T12:00:00Z","response":"","done":true,"done_reason":"stop"}']);
    expect(ev).toEqual({ done: true, finishReason: 'stop', usage: { outputTokens: 0, source: 'server-usage' } });
  });

  it('thinking text counts as generated text and is said apart', () => {
    expect(feed('ollama', ['{"model":"m","created_at":"x","response":"","thinking":"\\u003cplan\\u003e","done":false}'])).toEqual([
      { text: '<plan>', reasoning: '<plan>' },
    ]);
  });
});

describe('triton', () => {
  it('empty text_output events (partial UTF-8) carry nothing; in-band errors', () => {
    expect(
      feed('triton', [
        '{"model_name":"ensemble","model_version":"1","sequence_end":false,"text_output":""}',
        '{"error":"in ensemble \'ensemble\', Encountered error for requestId 1"}',
      ]),
    ).toEqual([null, { error: { message: "in ensemble 'ensemble', Encountered error for requestId 1" } }]);
  });
});

describe('sglang without output_ids, incremental mode', () => {
  it('a delta that repeats the text so far is not swallowed', () => {
    const ev = (text: string, n: number) => `{"text":"${text}","meta_info":{"prompt_tokens":2,"completion_tokens":${n},"finish_reason":null}}`;
    expect(feed('sglang', [ev(' the', 1), ev(' cat', 2), ev(' the', 3)]).map((e) => e?.text)).toEqual([' the', ' cat', ' the']);
    expect(feed('sglang', [ev(' the', 1), ev(' the the', 2), ev(' the the cat', 3)]).map((e) => e?.text)).toEqual([' the', ' the', ' cat']);
  });
});
