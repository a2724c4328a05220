import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';
import { runCli } from '../helpers/cli.js';

/** Visible text of an HTML document: no scripts, no tags, entities decoded, whitespace folded. */
function htmlText(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** The "- " lines under report.md's table, as a reader sees them (Markdown escapes and bold undone). */
function markdownNotes(md: string): string[] {
  return md
    .split('\n')
    .filter((l) => l.startsWith('- ') && !l.startsWith('- **'))
    .map((l) => l.slice(2).replace(/\\\*/g, '*').replace(/\*\*(.+?)\*\*/g, '$1').replace(/\s+/g, ' ').trim());
}

describe('report.html carries every line report.md prints under its table (issue 36 item 6)', () => {
  let dir: string;
  let html: string;
  let md: string;

  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'ib-html-notes-'));
    dir = join(root, 'run');
    const made = await runCli(['predict', '--profile', 'sweep', '--max-requests', '15', '--sweep-rates', '3', '--out', dir]);
    expect(made.code, made.stderr).toBe(0);
    // A predicted run is deterministic but clean: give its rows every mark a measured run can carry, as summary.json
    // stores them, so the notes under the table cover *, †, ‡, §, ~, the prompt-length check and the throughput search.
    const path = join(dir, 'summary.json');
    const doc = JSON.parse(readFileSync(path, 'utf8')) as RunSummaryDoc;
    doc.context.predicted = false;
    const pick = (f: (s: StageSummary) => boolean): StageSummary => doc.stages.find(f) as StageSummary;
    const sync = pick((s) => s.label === 'synchronous');
    const tput = pick((s) => s.label === 'throughput');
    const [low, mid, high] = doc.stages.filter((s) => s.kind === 'open').sort((a, b) => (a.targetRate ?? 0) - (b.targetRate ?? 0)) as [StageSummary, StageSummary, StageSummary];
    Object.assign(high, { belowTarget: true, overload: 'completions 80% of sends: the server did not keep up' });
    Object.assign(low, { unintendedCache: { requests: 15, meanCachedTokens: 480, shareOfPromptTokens: 0.9 } });
    Object.assign(mid, { idleWait: { waitedS: 12.5, idle: false, method: 'one-token probe' }, steadyWarnings: ['in flight rose 40% through the window'] });
    Object.assign(sync, { promptLengthMismatches: 2 });
    sync.metrics.promptTokenMismatch = { count: 15, mean: 0.1, median: 0, p90: 0, p95: 1, p99: 1, min: -1, max: 1, stddev: 0.4 };
    tput.window = { ...(tput.window ?? { rule: 'steady', startS: 1, lengthS: 5 }), capSearch: { cap: 64, steps: [{ cap: 32, completionRate: 7.5 }, { cap: 64, completionRate: 8.2 }] } };
    writeFileSync(path, JSON.stringify(doc));
    const out = join(root, 'report');
    const r = await runCli(['report', dir, '--format', 'md,html', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    html = htmlText(readFileSync(join(out, 'report.html'), 'utf8'));
    md = readFileSync(join(out, 'report.md'), 'utf8');
  }, 120_000);

  it('has every note of report.md, the marks and the checks among them', () => {
    const notes = markdownNotes(md);
    for (const start of ['* overloaded', '‡ WARNING', '§ started on a busy server', '~ ', '† p99 from fewer than', 'prompt lengths:']) {
      expect(notes.some((n) => n.startsWith(start)), `report.md has a note starting "${start}"`).toBe(true);
    }
    expect(notes.some((n) => /throughput: kept 64 requests in flight \(searched: 32 → 7\.50 req\/s, 64 → 8\.20 req\/s\)/.test(n))).toBe(true);
    for (const n of notes) expect(html, `report.html lacks: ${n}`).toContain(n);
  });
});
