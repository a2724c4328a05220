import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { decideFault, parseFaultSpec, type FaultKind, type SimServer } from '../../src/sim/server/index.js';
import { InferbenchError } from '../../src/core/errors.js';
import { start } from './server-helpers.js';

let servers: SimServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  error?: string;
}

/** node:http so resets and truncations are observable as such. */
function raw(server: SimServer, path: string, body: unknown): Promise<Raw> {
  return new Promise((resolve) => {
    const req = request(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', (e) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, error: (e as NodeJS.ErrnoException).code ?? e.message }));
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: '', error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(JSON.stringify(body));
  });
}

function classify(r: Raw, n: number): FaultKind | 'ok' {
  if (r.status === 429 || r.status === 500 || r.status === 503) return String(r.status) as FaultKind;
  if (r.error) return 'reset';
  const events = r.body.split('\n\n').filter(Boolean);
  if (events.at(-1) !== 'data: [DONE]') return 'truncate';
  for (const e of events.slice(0, -1)) {
    try {
      JSON.parse(e.slice(6));
    } catch {
      return 'malformed';
    }
  }
  return events.length === n + 1 ? 'ok' : 'truncate';
}

describe('fault spec', () => {
  it('parses rates and parameters', () => {
    const s = parseFaultSpec('429:0.05,500:0.01,503:0.01,reset:0.02,stall:0.01,malformed:0.01,truncate:0.01,slow-first-byte:0.02,stall-ms:300,slow-ms:200,retry-after:3');
    expect(s.rates).toMatchObject({ '429': 0.05, reset: 0.02, 'slow-first-byte': 0.02 });
    expect([s.stallMs, s.slowMs, s.retryAfterS]).toEqual([300, 200, 3]);
  });

  it('rejects bad specs with a one-line config error', () => {
    for (const bad of ['429', 'boom:0.1', '429:2', '429:x', '429:0.6,500:0.6', 'stall-ms:-1', '500:0.1,500:0.2']) {
      let err: unknown;
      try {
        parseFaultSpec(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InferbenchError);
      expect((err as InferbenchError).code).toBe('E_CONFIG');
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('decides per request index, deterministically, at the configured rates', () => {
    const spec = parseFaultSpec('429:0.1,reset:0.05');
    const a = Array.from({ length: 20_000 }, (_, i) => decideFault(spec, 3, i)?.kind ?? 'ok');
    const b = Array.from({ length: 20_000 }, (_, i) => decideFault(spec, 3, i)?.kind ?? 'ok');
    expect(a).toEqual(b);
    const share = (k: string): number => a.filter((x) => x === k).length / a.length;
    expect(share('429')).toBeGreaterThan(0.09);
    expect(share('429')).toBeLessThan(0.11);
    expect(share('reset')).toBeGreaterThan(0.042);
    expect(share('reset')).toBeLessThan(0.058);
    const other = Array.from({ length: 200 }, (_, i) => decideFault(spec, 4, i)?.kind ?? 'ok');
    expect(other).not.toEqual(a.slice(0, 200));
  });
});

describe('fault injection over HTTP', () => {
  const N = 6;
  const spec = '429:0.15,500:0.05,503:0.05,reset:0.1,malformed:0.1,truncate:0.1,stall:0.05,slow-first-byte:0.05,stall-ms:30,slow-ms:30,retry-after:2';
  const req = { prompt: 'Hello', max_tokens: N, ignore_eos: true, stream: true };

  async function run(seed: number, count: number): Promise<Array<FaultKind | 'ok'>> {
    const server = await start('vllm', { seed, faults: spec });
    servers.push(server);
    const out: Array<FaultKind | 'ok'> = [];
    for (let i = 0; i < count; i++) {
      const r = await raw(server, '/v1/completions', req);
      if (r.status === 429) expect(r.headers['retry-after']).toBe('2');
      out.push(classify(r, N));
    }
    return out;
  }

  it('injects each fault where decideFault says, reproducibly under a seed', async () => {
    const count = 120;
    const seen = await run(11, count);
    const parsed = parseFaultSpec(spec);
    // request ids start at 1; stall and slow-first-byte still deliver a complete stream
    const expected = Array.from({ length: count }, (_, i) => {
      const k = decideFault(parsed, 11, i + 1)?.kind;
      return k === undefined || k === 'stall' || k === 'slow-first-byte' ? 'ok' : k;
    });
    expect(seen).toEqual(expected);
    const faulty = seen.filter((k) => k !== 'ok').length / count;
    expect(faulty).toBeGreaterThan(0.35);
    expect(faulty).toBeLessThan(0.75);
    expect(await run(11, 30)).toEqual(seen.slice(0, 30));
  });

  it('stall and slow first byte delay writes, visible in ground truth', async () => {
    const server = await start('vllm', { seed: 5, faults: 'stall:0.5,slow-first-byte:0.5,stall-ms:60,slow-ms:60' });
    servers.push(server);
    for (let i = 0; i < 6; i++) await raw(server, '/v1/completions', req);
    const recs = server.truth.finished();
    expect(recs).toHaveLength(6);
    for (const r of recs) {
      expect(r.fault === 'stall' || r.fault === 'slow-first-byte').toBe(true);
      const lateness = r.writtenMs.map((w, i) => w - (r.plannedMs[i] ?? 0));
      expect(Math.max(...lateness)).toBeGreaterThan(20);
      expect(r.writtenMs).toHaveLength(N);
    }
  });
});
