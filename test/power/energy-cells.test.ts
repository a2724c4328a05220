/**
 * How measured energy reads in the run's tables and notes (pure, in process): Avg W is `—` for a window the readings
 * did not cover and for a row with no readings (J/token `invalid`), while summary.json keeps the figures with
 * `valid: false`; the energy note names the source each row was read from (a resumed run reads its later rows from
 * another simulator), and the power chart draws each replica's GPUs as lines of their own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { powerCharts } from '../../src/report/html-charts.js';
import { readPowerSeries } from '../../src/store/run-details.js';
import { renderMarkdownReport, renderTerminalReport } from '../../src/report/run-summary.js';
import { runSummaryDocSchema } from '../../src/results/run-summary.js';
import type { Energy } from '../../src/results/energy.js';

function stage(index: number, energy: Partial<Energy>) {
  return {
    index, label: `constant@${index + 4} req/s`, kind: 'open', durationS: 8, targetRate: index + 4,
    window: { rule: 'steady', startS: 0, lengthS: 8, fromMs: 1000 * index, toMs: 1000 * index + 8000 },
    requests: { total: 32, ok: 32 }, requestThroughput: 4, outputTokenThroughput: 400, totalTokenThroughput: 800,
    energy: { joules: 0, avgWatts: 0, gpus: [0], source: 'dcgm:http://127.0.0.1:1/metrics', coverage: 1, valid: true, ...energy },
  };
}

/** The newcomer's row 1 (coverage 63%, 167 W over what was covered), row 2 (no readings) and a valid row. */
const doc = runSummaryDocSchema.parse({
  layout: 'sweep',
  context: { model: 'Llama-3.1-8B', engine: 'vllm' },
  stages: [
    stage(0, { joules: 1336, avgWatts: 167, coverage: 0.63, valid: false, reason: 'power readings covered 63.0% of the window (at least 90% needed)' }),
    stage(1, { joules: 0, avgWatts: 0, coverage: 0, valid: false, reason: 'power readings covered 0.0% of the window (at least 90% needed)' }),
    stage(2, { joules: 2000, avgWatts: 250, joulesPerOutputToken: 0.625, coverage: 1, valid: true }),
  ],
});

/** Cells of the table's J/token and Avg W columns, row by row. */
function energyCells(text: string): string[][] {
  const lines = text.split('\n').filter((l) => l.startsWith('|') && !/^\|\s*:?-/.test(l));
  const cells = lines.map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  const header = cells[0] ?? [];
  const j = header.indexOf('J/token');
  const w = header.indexOf('Avg W');
  expect(j).toBeGreaterThan(0);
  return cells.slice(1).map((r) => [r[j] as string, r[w] as string]);
}

describe('energy cells', () => {
  it('Avg W is — where the window is invalid or had no readings, in the terminal and in table.md', () => {
    const expected = [['invalid', '—'], ['invalid', '—'], ['0.625', '250']];
    expect(energyCells(renderTerminalReport(doc))).toEqual(expected);
    expect(energyCells(renderMarkdownReport(doc))).toEqual(expected);
    // summary.json keeps what was measured, marked invalid.
    expect(doc.stages[0]?.energy).toMatchObject({ avgWatts: 167, valid: false });
  });

  it('the note names the source of each part of a resumed run, and why rows have no J/token, once per reason', () => {
    const a = 'dcgm:http://127.0.0.1:37533/metrics';
    const b = 'dcgm:http://127.0.0.1:41329/metrics';
    const resumed = runSummaryDocSchema.parse({
      layout: 'sweep',
      context: { model: 'Llama-3.1-8B', engine: 'vllm (simulated)' },
      stages: [
        stage(0, { joules: 2000, avgWatts: 250, joulesPerOutputToken: 0.625, source: a }),
        stage(1, { joules: 2000, avgWatts: 250, joulesPerOutputToken: 0.625, source: b }),
        stage(2, { joules: 2000, avgWatts: 250, joulesPerOutputToken: 0.625, source: b }),
      ],
    });
    const md = renderMarkdownReport(resumed);
    expect(md).toContain(`- energy: ${a} (GPU 0) for constant@4 req/s; ${b} (GPU 0) for constant@5 req/s, constant@6 req/s; J/token = joules / output tokens in the window`);
    expect(renderMarkdownReport(doc)).toContain(
      '; no J/token or Avg W for constant@4 req/s — power readings covered 63.0% of the window (at least 90% needed); constant@5 req/s — power readings covered 0.0% of the window (at least 90% needed)',
    );
  });

  it("charts each replica's GPUs as lines of their own (power.jsonl's replica), not one GPU 0 zigzagging between them", () => {
    const dir = mkdtempSync(join(tmpdir(), 'ib-power-series-'));
    try {
      const lines = [[0, 300], [1, 200], [0, 310], [1, 210]].map(([replica, watts], i) => JSON.stringify({ t: 100 * i, gpu: 0, watts, epochMs: 1e12 + 100 * i, replica }));
      writeFileSync(join(dir, 'power.jsonl'), `${lines.join('\n')}\n`);
      const series = readPowerSeries(dir).map(({ atMs, ...p }) => ({ ...p, tS: atMs / 1000 }));
      const chart = powerCharts(['run'], [series])[0]?.spec as unknown as { data: { values: Array<{ gpu: string; watts: number }> } };
      expect(chart.data.values.map((v) => [v.gpu, v.watts])).toEqual([['replica 0 GPU 0', 300], ['replica 1 GPU 0', 200], ['replica 0 GPU 0', 310], ['replica 1 GPU 0', 210]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
