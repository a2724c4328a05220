import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { KEEP_UP_NEAR } from '../../src/load/capacity.js';
import type { CapacityResult } from '../../src/load/capacity-types.js';
import { cliInProcess } from '../helpers/cli-in-process-capgate.js';
import { startHardCapacityServer, type HardCapacityServer } from '../helpers/hard-capacity-server.js';
import { runInProcess } from '../helpers/run-in-process.js';

// A server of known, hard capacity: 4 slots, each request 5 ms to its first token then 3 × 20 ms; a request that finds
// 4 in the server waits 0.5 s more for its first token. Against --slo ttft:300 a probe within capacity meets it with
// ~290 ms to spare and one past it misses by ~200 ms — a busy machine only ever makes a reply later, never earlier, so
// a late timer cannot turn a miss into a hit — and the search's decisions do not depend on how busy the machine is:
// these tests assert the decisions, not timing margins (bench/capacity-known.ts prints how close the rate-axis answer
// comes to the server's capacity).
//
// The searches run in this process (`inferbench run` through its own flag parsing and command, helpers/run-in-process.ts)
// and at once, each against its own server: they spend their time waiting on the servers' clocks. The refusals go
// through the CLI's main in this process, for its one-line errors and exit codes. Four output tokens and a 0.5-s
// overflow keep each probe short: a search takes half the time it took with eight tokens and a 1-s overflow.
const SLOTS = 4;
const SERVICE_S = 0.065;
const common = ['--output-tokens', '4', '--prompt-tokens', '32', '--tokenizer', 'approx', '--max-seconds', '1', '--no-progress'];
const servers: HardCapacityServer[] = [];
/** A server of its own for each test: tests running at once never share slots. */
let forConcurrency: HardCapacityServer;
let forRate: HardCapacityServer;
let forNone: HardCapacityServer;

beforeAll(async () => {
  for (let i = 0; i < 3; i++) servers.push(await startHardCapacityServer({ slots: SLOTS, prefillMs: 5, tokenMs: 20, overflowMs: 500 }));
  [forConcurrency, forRate, forNone] = servers as [HardCapacityServer, HardCapacityServer, HardCapacityServer];
});
const folders: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

function capacityOf(dir: string): CapacityResult {
  return (JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { capacity: CapacityResult }).capacity;
}

function runFolder(): string {
  folders.push(mkdtempSync(join(tmpdir(), 'cap-')));
  return join(folders[folders.length - 1] as string, 'run');
}

describe.concurrent('run --profile capacity against a server of known capacity', () => {
  it('finds the stream count on the concurrency axis, and a second search against the same server finds the same', async ({ expect }) => {
    const search = async (): Promise<{ stdout: string; capacity: CapacityResult }> => {
      const out = runFolder();
      const r = await runInProcess(['--target', forConcurrency.url, '--profile', 'capacity', '--capacity-axis', 'concurrency', '--slo', 'ttft:300', '--out', out, ...common]);
      expect(r.code, r.stderr).toBe(0);
      return { stdout: r.stdout, capacity: capacityOf(out) };
    };
    const { stdout, capacity: c } = await search();
    expect(c.feasibleMax).toBe(SLOTS);
    expect(c.firstBreach).toBe(SLOTS + 1);
    // 1, 2, 4, 8 streams, then bisection down to 5: every decision on the stream axis
    expect([...new Set(c.probes.map((p) => p.load))]).toEqual([1, 2, 4, 5, 6, 8]);
    expect(c.settled).toBe(true);
    expect(stdout).toContain(`capacity: ${SLOTS} streams — the most concurrent streams at which 99% of requests met ttft ≤ 300 ms`);
    expect(stdout).toContain('99% attainment of ttft ≤ 300 ms is the same as p99 TTFT ≤ 300 ms');
    // every probe is a row of the table, marked against the target
    expect(stdout).toMatch(/concurrent@4 .*\|\s+pass \d+\.\d% of \d+/);
    expect(stdout).toMatch(/concurrent@5 .*\|\s+FAIL \d+\.\d% of \d+/);
    // Reproducible: another search against the same server lands within the step (one stream) of the first — on this
    // server exactly on it: the same bracket, and the same pass/fail at every load (its runs pooled).
    const again = (await search()).capacity;
    expect(Math.abs((again.feasibleMax as number) - (c.feasibleMax as number))).toBeLessThanOrEqual(c.precision);
    expect([again.feasibleMax, again.firstBreach]).toEqual([c.feasibleMax, c.firstBreach]);
    expect(again.fitted.map((p) => [p.load, p.pass])).toEqual(c.fitted.map((p) => [p.load, p.pass]));
    expect(again.settled).toBe(true);
  }, 300_000);

  it('on the rate axis: brackets the capacity, fails past it, states the step as a step, and runs keep-up-only failures again', async ({ expect }) => {
    const out = runFolder();
    const r = await runInProcess(['--target', forRate.url, '--profile', 'capacity', '--slo', 'ttft:300', '--out', out, '--json', ...common]);
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

  it('exits 1 when even one request at a time misses the SLO', async ({ expect }) => {
    const out = runFolder();
    const r = await cliInProcess(['run', '--target', forNone.url, '--profile', 'capacity', '--slo', 'e2e:10', '--out', out, ...common]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('capacity: none — even one request at a time missed the SLO');
    expect(capacityOf(out)).toMatchObject({ feasibleMax: null, probes: [{ load: expect.any(Number), pass: false }] });
  }, 180_000);

  it('refuses a capacity search without an SLO, and capacity flags without the profile', async ({ expect }) => {
    const a = await cliInProcess(['run', '--target', forNone.url, '--profile', 'capacity']);
    const b = await cliInProcess(['predict', '--capacity-axis', 'concurrency', '--slo-attainment', '95']);
    const c = await cliInProcess(['predict', '--profile', 'capacity', '--slo', 'ttft:300', '--slo-attainment', '120']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--profile capacity searches against an SLO: add --slo');
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--slo-attainment, --capacity-axis shape the capacity search; add --profile capacity');
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--slo-attainment "120" is not a percentage between 0.1 and 100');
  }, 180_000);
});
