import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDuration, parseRateList } from '../../src/config/parse.js';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { resolvePlanOptions } from '../../src/cli/plan-options.js';
import { predictCommand } from '../../src/cli/predict-command.js';
import { readRunFolder } from '../helpers/run-folder.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-durations-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function sink(): NodeJS.WriteStream {
  const s = new PassThrough();
  s.resume();
  return s as unknown as NodeJS.WriteStream;
}

describe('durations with units wherever seconds are asked (issue 17, item 7)', () => {
  it('reads plain seconds and 500ms, 30s, 5m, 1h, 1m30s', () => {
    const p: string[] = [];
    const cases: Array<[string, number]> = [['30', 30], ['0.5', 0.5], ['500ms', 0.5], ['30s', 30], ['5m', 300], ['1h', 3600], ['1m30s', 90], ['1.5h', 5400], [' 2M ', 120]];
    for (const [raw, seconds] of cases) expect(parseDuration('--max-seconds', raw, p, { positive: true }), raw).toBe(seconds);
    expect(p).toEqual([]);
    for (const raw of ['5x', '', 'm', '-1', '1m-3s', 'inf']) expect(parseDuration('--max-seconds', raw, p, { positive: true }), raw).toBeUndefined();
    expect(p[0]).toBe('--max-seconds "5x" is not a duration > 0; write seconds (30) or a number with a unit: 500ms, 30s, 5m, 1h');
    expect(parseDuration('--warmup', '0s', p, { min: 0 })).toBe(0);
  });

  it('run/predict: --max-seconds, --warmup, --drain, --idle-wait and every --timeout-*', () => {
    const o = resolveRunOptions(
      { maxSeconds: '2m', warmup: '10s', drain: '1m', idleWait: '0', timeoutConnect: '500ms', timeoutFirstByte: '90', timeoutIdle: '2m', timeoutRequest: '1h' },
      {},
    );
    expect([o.maxSeconds, o.warmupSeconds, o.drainSeconds, o.idleWaitSeconds]).toEqual([120, 10, 60, 0]);
    expect(o.timeouts).toEqual({ connectMs: 500, firstByteMs: 90_000, idleMs: 120_000, totalMs: 3_600_000 });
    expect(() => resolveRunOptions({ maxSeconds: '5 minutes' }, {})).toThrow(/--max-seconds "5 minutes" is not a duration/);
  });

  it('plan: --max-seconds and --warmup', () => {
    const plan = resolvePlanOptions({ model: 'Qwen2-7B-Instruct', slo: 'ttft:2000', rate: '2', maxSeconds: '1m', warmup: '500ms', gpu: 'H100', tp: '1', threads: '1' });
    expect(plan.job.limits).toEqual({ maxSeconds: 60, warmupSeconds: 0.5 });
  });
});

describe('--rate inf: a row that sends all its requests at once (issue 17, item 7)', () => {
  it('parses inf beside finite rates, keeping their order', () => {
    const p: string[] = [];
    expect(parseRateList('--rate', '2,inf,0.5', p)).toEqual([2, Number.POSITIVE_INFINITY, 0.5]);
    expect(parseRateList('--rate', 'Infinity', p)).toEqual([Number.POSITIVE_INFINITY]);
    expect(p).toEqual([]);
    expect(parseRateList('--rate', '2,infx', p)).toBeUndefined();
    expect(p).toEqual(['--rate "infx" is not a number > 0']);
    expect(resolveRunOptions({ rate: 'inf' }, {}).profile).toBe('constant');
  });

  it('predict --rate inf,4 --max-requests 24: the inf row is a burst of 24 requests scheduled at one instant, then the 4 req/s row', async () => {
    const out = join(tmp, 'inf');
    const opts = resolveRunOptions({ rate: 'inf,4', maxRequests: '24', out }, {});
    const { doc } = await predictCommand(opts, { stdout: sink(), stderr: sink() });
    expect(doc.stages.map((s) => s.label)).toEqual(['all at once (24 requests)', 'asynchronous@4.00 req/sec']);
    const burst = doc.stages[0];
    expect(burst?.kind).toBe('burst');
    expect(burst?.requests.total).toBe(24);
    const { records } = readRunFolder(out);
    const sent = records.filter((r) => r.stage === 0).map((r) => r.scheduledAtMs);
    expect(sent).toHaveLength(24);
    expect(Math.max(...sent) - Math.min(...sent)).toBe(0);
  });

  it('without --max-requests the burst is --num-prompts requests', async () => {
    const { doc } = await predictCommand(resolveRunOptions({ rate: 'inf', numPrompts: '40', numPromptsExplicit: true }, {}), { stdout: sink(), stderr: sink() });
    expect(doc.stages.map((s) => [s.label, s.requests.total])).toEqual([['all at once (40 requests)', 40]]);
  });
});
