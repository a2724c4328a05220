/**
 * `inferbench matrix` over a real llama-server at --parallel 1, 2 and 4: each cell started, waited for, measured
 * with the capacity profile on the concurrency axis under a TTFT limit, and stopped. Each cell really ran with its
 * --parallel: the server's own gauges (llamacpp:requests_processing / requests_deferred, sampled into each row's
 * `server` peaks) never show more requests running than the cell's slots, show the slots full in every row of at
 * least as many streams, and show requests waiting in every row of more. Start-up times and capacities are printed,
 * not bounded: wall-clock figures on a shared machine (in CI beside a CPU-heavy job, one slot held 3 streams under the
 * limit and two slots 2, as 256 tokens took ~0.2 s there and a queued request still made the limit).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_SHAPE, makeTinyGguf } from '../../scripts/llamacpp/make-tiny-gguf.js';
import type { MatrixDoc } from '../../src/matrix/types.js';
import { runCli } from '../helpers/cli.js';
import { readRowGauges } from './inferbench-run.js';

const build = inject('llamaServerBuild');
const skipReason = 'skipReason' in build ? build.skipReason : undefined;

/**
 * A request waiting for a slot waits for another's whole generation (0.2–0.7 s for 256 tokens on one thread); one
 * that finds a free slot has its first token in ~0.1 s (up to ~0.3 s on a busy machine, hence the 80% attainment).
 */
const TTFT_LIMIT_MS = 500;
const RUN = ['--profile', 'capacity', '--capacity-axis', 'concurrency', '--slo', `ttft:${TTFT_LIMIT_MS}`, '--slo-attainment', '80',
  '--prompt-tokens', '128', '--output-tokens', '256', '--max-seconds', '6', '--seed', '31', '--no-progress'];

describe.skipIf(skipReason !== undefined)('inferbench matrix over llama-server --parallel 1,2,4', () => {
  let dir: string;
  let doc: MatrixDoc;
  let stdout: string;

  beforeAll(async () => {
    if (!('dir' in build)) return;
    dir = mkdtempSync(join(tmpdir(), 'inferbench-llamacpp-matrix-'));
    const model = join(dir, 'tiny-llama.gguf');
    makeTinyGguf(join(build.dir, 'ggml-vocab-gpt-2.gguf'), model, { ...DEFAULT_SHAPE, eosBias: 4 });
    const server = `${join(build.dir, 'bin/llama-server')} -m ${model} --host 127.0.0.1 --port {port} --parallel {parallel} -c 4096 -t 1 -tb 1 --metrics`;
    const res = await runCli(['matrix', '--server-cmd', `llama=${server}`, '--vary', 'parallel=1,2,4', '--ready-timeout', '2m', '--out', join(dir, 'm'), '--', ...RUN], { timeoutMs: 9 * 60_000 });
    if (res.code !== 0) throw new Error(`inferbench matrix exited ${res.code}:\n${res.stderr.slice(-4000)}`);
    stdout = res.stdout;
    doc = JSON.parse(readFileSync(join(dir, 'm', 'matrix.json'), 'utf8')) as MatrixDoc;
  }, 10 * 60_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('measures every cell, each at its own number of slots (the server gauges), and prints the capacity per cell', () => {
    const lines = doc.cells.map((c) => `${c.name}: start-up ${c.startupSeconds?.toFixed(2)} s, first request ${c.firstRequestMs?.toFixed(0)} ms, capacity ${c.headline?.capacity?.feasibleMax} ${c.headline?.capacity?.unit}`);
    console.log(['[llama.cpp] matrix --vary parallel=1,2,4', ...lines.map((l) => `  ${l}`)].join('\n'));
    // The matrix's own cells table and capacity ranking, as it printed them.
    console.log(stdout.slice(stdout.indexOf('# inferbench matrix')).split('\n').filter((l) => l.startsWith('|') || l.startsWith('#') || l.startsWith('capacity')).join('\n'));
    expect(doc.cells.map((c) => [c.params['parallel'], c.status, c.engine])).toEqual([
      ['1', 'ok', 'llamacpp'],
      ['2', 'ok', 'llamacpp'],
      ['4', 'ok', 'llamacpp'],
    ]);
    for (const c of doc.cells) expect(c.startupSeconds).toBeGreaterThan(0);
    expect(doc.cells.every((c) => c.headline?.capacity?.unit === 'streams')).toBe(true);
    const gauges = doc.cells.map((c) => {
      const slots = Number(c.params['parallel']);
      const rows = readRowGauges(join(dir, 'm', c.runDir as string)).map((g) => ({ streams: g.concurrency as number, running: g.peakRunning, waiting: g.peakWaiting }));
      return { slots, rows };
    });
    console.log(['[llama.cpp] matrix server gauges (streams: peak running / waiting)', ...gauges.map((g) => `  ${g.slots} slots: ${g.rows.map((r) => `${r.streams}: ${r.running}/${r.waiting}`).join(', ')}`)].join('\n'));
    for (const g of gauges) {
      expect(g.rows.length, `${g.slots} slots`).toBeGreaterThan(0);
      for (const r of g.rows) {
        const at = `${g.slots} slots, ${r.streams} streams`;
        expect(r.running, at).toBeLessThanOrEqual(g.slots);
        if (r.streams >= g.slots) expect(r.running, at).toBe(g.slots);
        if (r.streams > g.slots) expect(r.waiting, at).toBeGreaterThan(0);
        if (r.streams <= g.slots) expect(r.waiting, at).toBe(0);
      }
    }
    // The search reached each cell's slots (a free slot answers well within the limit), so the checks above ran.
    for (const g of gauges) expect(Math.max(...g.rows.map((r) => r.streams)), `${g.slots} slots`).toBeGreaterThanOrEqual(g.slots);
    // The comparison: start-up per cell, and compare's capacity ranking.
    expect(stdout).toContain('Start-up (s)');
    expect(stdout).toContain('Capacity ranking');
  });
});
