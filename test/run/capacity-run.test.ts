import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { runCli } from '../helpers/cli.js';
import { startSlotServer, type SlotServer } from '../helpers/slot-server.js';

// A server of known capacity: 4 slots, each request holds one for 5 ms + 7 × 20 ms = 145 ms, the rest queue FIFO.
// It holds 4 streams, and 4 / 0.145 s = 27.6 req/s. On a loaded machine its timers run late and the service time
// grows with them: the rate test also checks against 4 / (the service time the synchronous probe measured).
const SLOTS = 4;
const SERVICE_S = 0.145;
let server: SlotServer;
const common = ['--output-tokens', '8', '--prompt-tokens', '32', '--tokenizer', 'approx', '--max-seconds', '1', '--no-progress'];

beforeAll(async () => {
  // cacheKeyChars past any prompt: every prompt is new to the server (no prefix-cache shortcut).
  server = await startSlotServer({ slots: SLOTS, prefillMs: 5, tokenMs: 20, metrics: true, cacheKeyChars: 1_000_000 });
});
afterAll(async () => server.close());

function capacityOf(dir: string): CapacityResult {
  return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { capacity: CapacityResult }).capacity;
}

describe('run --profile capacity against a server of known capacity', () => {
  it('finds the stream count on the concurrency axis', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--capacity-axis', 'concurrency', '--slo', 'ttft:60', '--out', out, ...common]);
    expect(r.code, r.stderr).toBe(0);
    const c = capacityOf(out);
    expect(c.feasibleMax).toBe(SLOTS);
    expect(c.firstBreach).toBe(SLOTS + 1);
    expect(r.stdout).toContain(`capacity: ${SLOTS} streams — the most concurrent streams at which 99% of requests met ttft ≤ 60 ms`);
    expect(r.stdout).toContain('99% attainment of ttft ≤ 60 ms is the same as p99 TTFT ≤ 60 ms');
    // every probe is a row of the table, marked against the target
    expect(r.stdout).toMatch(/concurrent@4 .*\|\s+pass 100\.0% of \d+/);
    expect(r.stdout).toMatch(/concurrent@5 .*\|\s+FAIL \d+\.\d% of \d+/);
  }, 120_000);

  it('finds N/S on the rate axis within 10%', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--slo', 'ttft:60', '--out', out, '--json', ...common]);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as { capacity: CapacityResult };
    const c = capacityOf(out);
    expect(printed.capacity).toEqual(c);
    const nominal = SLOTS / SERVICE_S;
    const sync = (printed as unknown as { stages: Array<{ label: string; metrics: { e2eMs?: { mean: number } } }> }).stages.find((st) => st.label === 'synchronous');
    const measured = SLOTS / ((sync?.metrics.e2eMs?.mean ?? 0) / 1000);
    expect(Math.abs((c.feasibleMax as number) - measured) / measured).toBeLessThanOrEqual(0.1);
    expect(Math.abs((c.feasibleMax as number) - nominal) / nominal).toBeLessThanOrEqual(0.15);
    expect(((c.firstBreach as number) - (c.feasibleMax as number)) / (c.feasibleMax as number)).toBeLessThanOrEqual(0.05 + 1e-9);
    expect(c.probes.map((p) => p.load)).toEqual([...c.probes.map((p) => p.load)].sort((a, b) => a - b));
  }, 120_000);

  it('exits 1 when even one request at a time misses the SLO', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cap-')), 'run');
    const r = await runCli(['run', '--target', server.url, '--profile', 'capacity', '--slo', 'e2e:10', '--out', out, ...common]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('capacity: none — even one request at a time missed the SLO');
    expect(capacityOf(out)).toMatchObject({ feasibleMax: null, probes: [{ load: expect.any(Number), pass: false }] });
  }, 60_000);

  it('refuses a capacity search without an SLO, and capacity flags without the profile', async () => {
    const a = await runCli(['run', '--target', server.url, '--profile', 'capacity']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--profile capacity searches against an SLO: add --slo');
    const b = await runCli(['predict', '--capacity-axis', 'concurrency', '--slo-attainment', '95']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--slo-attainment, --capacity-axis shape the capacity search; add --profile capacity');
    const c = await runCli(['predict', '--profile', 'capacity', '--slo', 'ttft:300', '--slo-attainment', '120']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--slo-attainment "120" is not a percentage between 0.1 and 100');
  }, 60_000);
});
