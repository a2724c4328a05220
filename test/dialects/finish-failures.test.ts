import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dialects } from '../../src/dialects/index.js';
import type { ApiName } from '../../src/dialects/types.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { runCli } from '../helpers/cli.js';
import { request } from './_run.js';

/** Feeds payloads to a fresh parser and returns the error the request would end with (the first one). */
function failureOf(api: ApiName, payloads: string[]): { code?: string; message: string } | undefined {
  const parser = dialects[api].createParser(request());
  for (const p of payloads) {
    const ev = parser.frame(p, 'data');
    if (ev?.error) return { ...(ev.error.code ? { code: ev.error.code } : {}), message: ev.error.message };
  }
  return undefined;
}

const oaiChunk = (finish: string | null, text = ' x'): string =>
  JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: finish }] });

describe('finish reasons that mean "not a normal completion"', () => {
  it('OpenAI-style streams: abort → E_ABORTED_BY_SERVER, error → E_FINISH_ERROR; stop/length/tool_calls/content_filter stay normal', () => {
    for (const api of ['openai-chat', 'openai-completions'] as const) {
      expect(failureOf(api, [oaiChunk(null), oaiChunk('abort', '')])?.code).toBe('E_ABORTED_BY_SERVER');
      expect(failureOf(api, [oaiChunk(null), oaiChunk('error', '')])?.code).toBe('E_FINISH_ERROR');
      for (const normal of ['stop', 'length', 'tool_calls', 'content_filter']) expect(failureOf(api, [oaiChunk(normal)]), normal).toBeUndefined();
    }
    // lmdeploy ≥0.14 writes Python json.dumps spacing; the word is what counts.
    expect(failureOf('openai-chat', ['{"id": "1", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "abort"}]}'])?.code).toBe('E_ABORTED_BY_SERVER');
  });

  it('native formats: SGLang/lmdeploy meta_info, TGI details, Ollama done_reason, llama.cpp stop_type', () => {
    const sglangAbort = '{"text":" a","output_ids":[1],"meta_info":{"finish_reason":{"type":"abort","message":"Abort in waiting queue","status_code":503},"prompt_tokens":2,"completion_tokens":1}}';
    expect(failureOf('sglang', [sglangAbort])).toEqual({ code: 'E_ABORTED_BY_SERVER', message: 'the server aborted the generation (finish reason "abort"): Abort in waiting queue (status 503)' });
    expect(failureOf('lmdeploy', ['{"text":" a","output_ids":[1],"meta_info":{"prompt_tokens":2,"completion_tokens":1,"finish_reason":{"type":"error"}}}'])?.code).toBe('E_FINISH_ERROR');
    expect(failureOf('lmdeploy', ['{"text":" a","output_ids":[1],"meta_info":{"prompt_tokens":2,"completion_tokens":1,"finish_reason":"abort"}}'])?.code).toBe('E_ABORTED_BY_SERVER');
    expect(failureOf('tgi', ['{"token":{"id":1,"text":" a","special":false},"generated_text":" a","details":{"finish_reason":"error","generated_tokens":1}}'])?.code).toBe('E_FINISH_ERROR');
    expect(failureOf('ollama', ['{"response":" a","done":true,"done_reason":"abort","eval_count":1}'])?.code).toBe('E_ABORTED_BY_SERVER');
    expect(failureOf('llamacpp', ['{"content":"","stop":true,"stop_type":"abort","tokens_predicted":1,"tokens_evaluated":2}'])?.code).toBe('E_ABORTED_BY_SERVER');
    // Normal ends of the same formats.
    expect(failureOf('sglang', ['{"text":" a","output_ids":[1],"meta_info":{"finish_reason":{"type":"length","length":1},"prompt_tokens":2,"completion_tokens":1}}'])).toBeUndefined();
    expect(failureOf('tgi', ['{"token":{"id":1,"text":" a","special":false},"generated_text":" a","details":{"finish_reason":"eos_token","generated_tokens":1}}'])).toBeUndefined();
    expect(failureOf('ollama', ['{"response":" a","done":true,"done_reason":"length","eval_count":1}'])).toBeUndefined();
    expect(failureOf('llamacpp', ['{"content":"","stop":true,"stop_type":"limit","tokens_predicted":1,"tokens_evaluated":2}'])).toBeUndefined();
  });
});

/** vLLM's bytes for a request the engine aborted: a few tokens, then finish_reason "abort", usage, [DONE]. */
function streamReply(res: ServerResponse, abort: boolean, maxTokens: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const tokens = abort ? 3 : maxTokens;
  let out = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;
  for (let i = 0; i < tokens; i++) {
    const last = i === tokens - 1;
    out += `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: last ? (abort ? 'abort' : 'length') : null }] })}\n\n`;
  }
  out += `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [], usage: { prompt_tokens: 16, completion_tokens: tokens, total_tokens: 16 + tokens } })}\n\ndata: [DONE]\n\n`;
  // A few writes apart, as a real engine streams them.
  const parts = out.split(/(?<=\n\n)/);
  const next = (): void => {
    const p = parts.shift();
    if (p === undefined) return void res.end();
    res.write(p);
    setTimeout(next, 2);
  };
  next();
}

describe('an aborted stream is a failed request (real HTTP, whole CLI)', () => {
  it('every other request ends with finish_reason "abort": counted as E_ABORTED_BY_SERVER, left out of the figures', async () => {
    let n = 0;
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/v1/models') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm' }] }));
        }
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res.writeHead(404, { 'content-type': 'application/json' });
          return void res.end('{"error":{"message":"no route"}}');
        }
        const body = JSON.parse(raw) as { max_tokens: number };
        streamReply(res, n++ % 2 === 1, body.max_tokens);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = join(mkdtempSync(join(tmpdir(), 'ib-abort-')), 'run');
    try {
      const res = await runCli([
        'run', '--target', url, '--api', 'openai-chat', '--model', 'm', '--profile', 'synchronous', '--max-requests', '8',
        '--prompt-tokens', '16', '--output-tokens', '8', '--out', out, '--no-progress',
      ]);
      expect(res.code, res.stderr).toBe(0);
      const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
      const measured = records.filter((r) => !r.warmup);
      const aborted = measured.filter((r) => r.finishReason === 'abort');
      expect(aborted.length).toBeGreaterThan(0);
      for (const r of aborted) {
        expect(r.status).toBe('error');
        expect(r.error?.code).toBe('E_ABORTED_BY_SERVER');
        expect(r.e2eMs).toBeUndefined();
      }
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
        stages: Array<{ requests: { ok: number; errors: number }; errorsByCode: Record<string, number>; outputLengthMismatches: number; metrics: { outputTokens?: { mean: number; min: number } } }>;
      };
      const row = summary.stages[0]!;
      expect(row.errorsByCode).toEqual({ E_ABORTED_BY_SERVER: aborted.length });
      expect(row.requests.ok).toBe(measured.length - aborted.length);
      // Only the complete 8-token replies are in the figures: no 3-token "success" drags the means.
      expect(row.metrics.outputTokens?.min).toBe(8);
      expect(row.outputLengthMismatches).toBe(0);
      expect(res.stdout).toMatch(/E_ABORTED_BY_SERVER×\d/);
      expect(res.stdout).not.toContain('stopped on its own');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 60_000);
});
