import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimServer, TruthRecord } from '../../src/sim/server/index.js';
import { call, start } from './server-helpers.js';

let server: SimServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('sim server ground truth', () => {
  it('records arrival, prefill and one in-order write time per token; serves trace and per-request views', async () => {
    server = await start('vllm', { modelTimeScale: 0.2 });
    const r = await call(server, 'POST', '/v1/completions', { prompt: 'Hello there', max_tokens: 12, ignore_eos: true, stream: true });
    const id = Number(r.headers.get('x-sim-request-id'));
    const rec = JSON.parse((await call(server, 'GET', `/sim/v1/requests/${id}`)).text) as TruthRecord;
    expect(rec.outcome).toBe('completed');
    expect(rec.prefillStartMs).toBeGreaterThanOrEqual(rec.arrivalMs);
    expect(rec.prefillEndMs).toBeGreaterThanOrEqual(rec.prefillStartMs!);
    expect(rec.writtenMs).toHaveLength(12);
    for (let i = 1; i < 12; i++) {
      expect(rec.plannedMs[i]!).toBeGreaterThan(rec.plannedMs[i - 1]!);
      expect(rec.writtenMs[i]!).toBeGreaterThanOrEqual(rec.writtenMs[i - 1]!);
    }
    // sanity bound only: 2 busy cores
    for (let i = 0; i < 12; i++) expect(rec.writtenMs[i]! - rec.plannedMs[i]!).toBeLessThan(250);
    await call(server, 'POST', '/v1/completions', { prompt: 'Hello', max_tokens: 2, ignore_eos: true });
    const trace = (await call(server, 'GET', '/sim/v1/trace')).text.trim().split('\n').map((l) => JSON.parse(l) as TruthRecord);
    expect(trace.map((t) => t.seq)).toEqual([1, 2]);
    const since = (await call(server, 'GET', '/sim/v1/trace?since=1')).text.trim().split('\n');
    expect(since).toHaveLength(1);
    expect((await call(server, 'GET', '/sim/v1/requests/999')).status).toBe(404);
  });

  it('cancels the engine request when the client disconnects', async () => {
    server = await start('vllm', { modelTimeScale: 1 });
    const s = server;
    const id = await new Promise<number>((resolve) => {
      const req = request(s.url + '/v1/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve(Number(res.headers['x-sim-request-id']));
        });
      });
      req.end(JSON.stringify({ prompt: 'Hello', max_tokens: 5000, ignore_eos: true, stream: true }));
    });
    for (let i = 0; i < 100 && s.truth.get(id)?.outcome == null; i++) await new Promise((r) => setTimeout(r, 10));
    expect(s.truth.get(id)?.outcome).toBe('cancelled');
    expect(s.engine.stats().running + s.engine.stats().waiting).toBe(0);
  });

  it('serves 300 concurrent streams with exact token counts', async () => {
    server = await start('vllm', { modelTimeScale: 0.1 });
    const s = server;
    const n = 300;
    const replies = await Promise.all(
      Array.from({ length: n }, () => call(s, 'POST', '/v1/completions', { prompt: 'Hi', max_tokens: 20, ignore_eos: true, stream: true, stream_options: { include_usage: true } })),
    );
    for (const r of replies) expect(r.text).toContain('"completion_tokens":20}');
    const recs = s.truth.finished();
    expect(recs).toHaveLength(n);
    expect(recs.every((r) => r.writtenMs.length === 20 && r.writtenMs.every(Number.isFinite))).toBe(true);
    const e = s.truth.emission();
    expect(e.tokens).toBe(n * 20);
  });
});
