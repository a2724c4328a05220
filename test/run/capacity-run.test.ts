import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEP_UP_NEAR } from '../../src/load/capacity.js';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { runCli } from '../helpers/cli.js';
import { startHardCapacityServer, type HardCapacityServer } from '../helpers/hard-capacity-server.js';

// A server of known, hard capacity: 4 slots, each request 5 ms to its first token then 7 × 20 ms; a request that finds
// 4 in the server waits 1 s more for its first token. Against --slo ttft:300 a probe within capacity meets it with
// ~290 ms to spare and one past it misses by ~700 ms, so the search's decisions do not depend on how busy the
// machine is: these tests assert the decisions, not timing margins (bench/capacity-known.ts prints how close the
// rate-axis answer comes to 4 / 0.145 s).
const SLOTS = 4;
const SERVICE_S = 0.145;
let server: HardCapacityServer;
const common = ['--output-tokens', '8', '--prompt-tokens', '32', '--tokenizer', 'approx', '--max-seconds', '1', '--no-progress'];

beforeAll(async () => {
  server = await startHardCapacityServer({ slots: SLOTS, prefillMs: 5, tokenMs: 20, overflowMs: 1000 });
});
afterAll(async () => server.close());

function capacityOf(dir: string): CapacityResult {
  return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { capacity: CapacityResult }).capacity;
}

describe('run --profile capacity against a server of known capacity', () => {
  it('finds the stream count on the concurrency axis', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--capacity-axis', 'concurrency', '--slo', 'ttft:300', '--out', out, ...common], { timeoutMs: 280_000 });
    expect(r.code, r.stderr).toBe(0);
    const c = capacityOf(out);
    expect(c.feasibleMax).toBe(SLOTS);
    expect(c.firstBreach).toBe(SLOTS + 1);
    // 1, 2, 4, 8 streams, then bisection down to 5: every decision on the stream axis
    expect([...new Set(c.probes.map((p) => p.load))]).toEqual([1, 2, 4, 5, 6, 8]);
    expect(c.settled).toBe(true);
    expect(r.stdout).toContain(`capacity: ${SLOTS} streams — the most concurrent streams at which 99% of requests met ttft ≤ 300 ms`);
    expect(r.stdout).toContain('99% attainment of ttft ≤ 300 ms is the same as p99 TTFT ≤ 300 ms');
    // every probe is a row of the table, marked against the target
    expect(r.stdout).toMatch(/concurrent@4 .*\|\s+pass \d+\.\d% of \d+/);
    expect(r.stdout).toMatch(/concurrent@5 .*\|\s+FAIL \d+\.\d% of \d+/);
  }, 300_000);

  it('on the rate axis: brackets the capacity, fails past it, states the step as a step, and runs keep-up-only failures again', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--slo', 'ttft:300', '--out', out, '--json', ...common], { timeoutMs: 420_000 });
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as { capacity: CapacityResult };
    const c = capacityOf(out);
    expect(printed.capacity).toEqual(c);
    // 1.5 × capacity overflows on most requests and cannot keep up: whatever the host, the first failure is below it
    expect(c.feasibleMax).not.toBeNull();
    expect(c.firstBreach as number).toBeGreaterThan(c.feasibleMax as number);
    expect(c.firstBreach as number).toBeLessThanOrEqual((1.5 * SLOTS) / SERVICE_S);
    expect(((c.firstBreach as number) - (c.feasibleMax as number)) / (c.feasibleMax as number)).toBeLessThanOrEqual(0.05 + 1e-9);
    expect(c.probes.map((p) => p.load)).toEqual([...c.probes.map((p) => p.load)].sort((a, b) => a - b));
    // a failure only on keeping up, near the boundary, was run again before it counted
    const runsAt = (load: number): number => c.probes.filter((p) => p.load === load).length;
    for (const p of c.probes) {
      const keepUpOnly = p.overSaturated !== undefined && p.earlyStop !== true && p.attainment >= 99 && p.errorShare <= 0.01;
      if (keepUpOnly && (p.sends ?? 0) > 0 && (p.completions ?? 0) >= KEEP_UP_NEAR * (p.sends ?? 0)) expect(runsAt(p.load), `${p.load} req/s`).toBe(2);
    }
    // the answer never lies below a load that held in the same search unless the verdict says it is not settled
    if (c.settled) expect(c.fitted.filter((p) => p.pass).every((p) => p.load <= (c.feasibleMax as number))).toBe(true);
    expect(c.verdict).toMatch(/\(first failure at \d+\.\d\d req\/s; search step ±5%, not an error bar\)/);
    expect(c.precisionMeaning).toMatch(/^±5% is the search's step: .* It is not the answer's error/);
  }, 480_000);

  it('exits 1 when even one request at a time misses the SLO', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--slo', 'e2e:10', '--out', out, ...common], { timeoutMs: 170_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('capacity: none — even one request at a time missed the SLO');
    expect(capacityOf(out)).toMatchObject({ feasibleMax: null, probes: [{ load: expect.any(Number), pass: false }] });
  }, 180_000);

  it('refuses a capacity search without an SLO, and capacity flags without the profile', async () => {
    const [a, b, c] = await Promise.all([
      runCli(['run', '--target', server.url, '--profile', 'capacity']),
      runCli(['predict', '--capacity-axis', 'concurrency', '--slo-attainment', '95']),
      runCli(['predict', '--profile', 'capacity', '--slo', 'ttft:300', '--slo-attainment', '120']),
    ]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--profile capacity searches against an SLO: add --slo');
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--slo-attainment, --capacity-axis shape the capacity search; add --profile capacity');
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--slo-attainment "120" is not a percentage between 0.1 and 100');
  }, 180_000);
});
