import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { runCli } from '../helpers/cli.js';

/**
 * Issue 36 item 7: compare like with like, measured. Saved runs made by `predict --out` (virtual time), then edited
 * as summary.json stores a measured run, so each case is exact: a server that served shorter outputs than asked,
 * two identical runs, and two runs a couple of percent apart.
 */

const GRID = ['--profile', 'grid', '--input-lens', '128', '--output-lens', '128,512', '--num-prompts', '30'];
const SWEEP = ['--profile', 'sweep', '--max-requests', '60', '--sweep-rates', '3'];

async function predict(args: string[], out: string): Promise<string> {
  const r = await runCli(['predict', ...args, '--out', out]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

function edit(dir: string, change: (doc: RunSummaryDoc) => void): void {
  const path = join(dir, 'summary.json');
  const doc = JSON.parse(readFileSync(path, 'utf8')) as RunSummaryDoc;
  change(doc);
  writeFileSync(path, JSON.stringify(doc));
}

/** A run's rows read as measured, not predicted: their differences are then weighed against their own noise. */
const measured = (doc: RunSummaryDoc): void => {
  doc.context.predicted = false;
};

/** Every figure of every row scaled by `k` (throughputs up, latencies down): a faster server by (k − 1). */
function faster(k: number) {
  return (doc: RunSummaryDoc): void => {
    for (const s of doc.stages) {
      s.requestThroughput *= k;
      s.outputTokenThroughput *= k;
      for (const m of ['ttftMs', 'itlMs', 'e2eMs'] as const) {
        const st = s.metrics[m];
        if (st) s.metrics[m] = { ...st, mean: st.mean / k, median: st.median / k, p99: st.p99 / k };
      }
    }
  };
}

const verdictLines = (md: string): string[] => md.slice(md.indexOf('## Verdict')).split('\n').filter((l) => l.startsWith('- '));

describe('compare checks the lengths the servers produced, not only those asked', () => {
  let root: string;
  let forced: string;
  let short: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ib-compare-measured-'));
    [forced, short] = await Promise.all([
      predict([...GRID, '--engine', 'vllm'], join(root, 'forced')),
      predict([...GRID, '--engine', 'vllm', '--label', 'stops-early'], join(root, 'short')),
    ]);
    // The second server stopped its "512-token" replies at about 245 tokens (as TGI did), its 128-token ones at 128.
    edit(short, (doc) => {
      for (const s of doc.stages.filter((x: StageSummary) => x.grid?.output === 512)) {
        const out = s.metrics.outputTokens;
        if (out) s.metrics.outputTokens = { ...out, mean: 245, median: 245, min: 180, max: 300 };
        s.outputTokenThroughput *= 245 / 512;
      }
    });
  }, 120_000);

  it('refuses, like different requested lengths, naming the cell and both means', async () => {
    const r = await runCli(['compare', forced, short, '--format', 'md', '--out', join(root, 'refused')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: these runs are not comparable — they differ in measured output length \(more than 5% apart\): /);
    expect(r.stderr).toMatch(/cell 128\/512 averaged 245 tokens in [^,]*stops-early[^,]*, 512 in [^,]* \(−52%\)/);
    expect(r.stderr).not.toContain('cell 128/128');
    expect(r.stderr).toContain('--allow-mismatch');
  });

  it('with --allow-mismatch: a WARNING, the cell\'s Δ marked and the figures under the tables', async () => {
    const out = join(root, 'allowed');
    const r = await runCli(['compare', forced, short, '--allow-mismatch', '--format', 'md', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/WARNING: comparing runs that differ in measured output length/);
    const md = readFileSync(join(out, 'compare.md'), 'utf8');
    const row512 = md.split('\n').filter((l) => /^\|\s*128\s*\|\s*512\s*\|/.test(l)).at(-1) as string;
    expect(row512).toMatch(/≠len/);
    const row128 = md.split('\n').filter((l) => /^\|\s*128\s*\|\s*128\s*\|/.test(l)).at(-1) as string;
    expect(row128).not.toMatch(/≠len/);
    expect(md).toContain("≠len on a Δ: that cell's measured mean lengths differ from the first run's by more than 5%");
    // Issue 51: the figures once in what the terminal shows (stdout and stderr together), once in compare.md.
    expect(`${r.stdout}${r.stderr}`.match(/averaged 245 tokens/g)).toHaveLength(1);
    expect(md.match(/averaged 245 tokens/g)).toHaveLength(1);
  });
});

describe('compare verdicts: ties are ties, noise is noise', () => {
  let root: string;
  let a: string;
  let b: string;
  let c: string;
  let d: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ib-compare-noise-'));
    [a, b, c, d] = await Promise.all([
      predict([...SWEEP, '--engine', 'vllm'], join(root, 'a')),
      predict([...SWEEP, '--engine', 'vllm', '--label', 'same'], join(root, 'b')),
      predict([...SWEEP, '--engine', 'vllm', '--label', 'two-percent'], join(root, 'c')),
      predict([...SWEEP, '--engine', 'vllm', '--label', 'twice'], join(root, 'd')),
    ]);
    for (const dir of [a, b, c, d]) edit(dir, measured);
    edit(c, faster(1.005));
    edit(d, faster(2));
  }, 120_000);

  async function verdict(x: string, y: string, name: string): Promise<string[]> {
    const out = join(root, name);
    const r = await runCli(['compare', x, y, '--format', 'md', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    return verdictLines(readFileSync(join(out, 'compare.md'), 'utf8'));
  }

  it('identical runs: every line a tie, no winner and no "+0.0%"', async () => {
    const lines = await verdict(a, b, 'tie');
    expect(lines.some((l) => /^- Output tokens\/s at saturation: a tie — .+ both [\d.]+ tok\/s\.$/.test(l) || /^- Highest output tokens\/s measured: a tie/.test(l))).toBe(true);
    expect(lines.some((l) => /TTFT a tie/.test(l))).toBe(true);
    expect(lines.some((l) => /ITL a tie/.test(l))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/\+0\.0%|lowest TTFT|Most output tokens/);
  });

  it('0.5% apart on one run each: a mean latency within its rows\' own spread is noise, use --repeat', async () => {
    const lines = (await verdict(a, c, 'noise')).join('\n');
    // TTFT's per-request spread at this rate (±2% at 95%) covers a 0.5% gap: no leader named.
    expect(lines).toMatch(/TTFT no clear leader — .+ ms vs .+ ms, within run-to-run noise \(±[\d.]+% at 95%, from each row's own spread, one run each\): run each with --repeat 3/);
    expect(lines).not.toMatch(/lowest TTFT/);
    // The saturated row's latencies are steady (its cool-down keeps the load on), so its own spread is narrower than
    // 0.5%: that gap is named as a lead, with its size.
    expect(lines).toMatch(/output tokens\/s at saturation: .+ \+0\.5% over/);
  });

  it('twice as fast: a lead, named', async () => {
    const lines = (await verdict(a, d, 'lead')).join('\n');
    expect(lines).toMatch(/(Most|Highest) output tokens\/s[^:]*: .*twice.* — [\d.]+ tok\/s.*\+100\.0% over/);
    expect(lines).not.toMatch(/no clear leader|a tie/);
  });
});
