import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runIdOf } from '../../src/store/run-store.js';
import type { LiveRun, RequestsView, RunRow, RunView } from '../../src/ui/client/api-types.js';
import { progressShort, progressText, rowInProgress } from '../../src/ui/client/progress-text.js';
import { startDashboard, type Dashboard } from '../../src/ui/server.js';

// The dashboard findings of issue 36 (newcomer report, finding 13), on the server's JSON: the runs list says what
// `ls` says, notes are text, histograms never pool rows, and a grid cell in progress shows no burst figures as
// its latency.
let root: string;
let results: string;
let dash: Dashboard;

async function api<T>(path: string): Promise<T> {
  const res = await fetch(new URL(path, dash.url));
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-ui-findings-'));
  results = join(root, 'results');
  const predict = async (args: string[], name: string): Promise<void> => {
    const r = await runCli(['predict', ...args, '--out', join(results, name)]);
    expect(r.code, r.stderr).toBe(0);
  };
  await Promise.all([
    predict(['--profile', 'grid', '--input-lens', '128,512', '--output-lens', '128,512', '--num-prompts', '10'], 'grid'),
    predict(['--profile', 'concurrent', '--concurrency', '1,4', '--max-requests', '20'], 'conc'),
    predict(['--profile', 'constant', '--rate', '5,200', '--max-seconds', '5'], 'over'),
  ]);
  // A grid run in progress: its last cell's burst is done, its latency pass not yet (summary.json as the run
  // rewrites it after every row).
  cpSync(join(results, 'grid'), join(results, 'grid-live'), { recursive: true });
  const summary = JSON.parse(readFileSync(join(results, 'grid-live', 'summary.json'), 'utf8')) as { stages: unknown[]; complete?: boolean };
  summary.stages = summary.stages.slice(0, -1);
  summary.complete = false;
  writeFileSync(join(results, 'grid-live', 'summary.json'), JSON.stringify(summary));
  dash = await startDashboard({ resultsDir: results, port: 0 });
}, 180_000);

afterAll(async () => {
  await dash?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('dashboard findings (issue 36, finding 13)', () => {
  it("lists each run's profile and rows as `inferbench ls` does: a 2×2 grid is 4 cells", async () => {
    const { runs } = await api<{ runs: RunRow[] }>('/api/runs');
    const ls = await runCli(['ls', '--results', results, '--json']);
    const profiles = new Map((JSON.parse(ls.stdout) as { name: string; profile: string }[]).map((r) => [r.name, r.profile]));
    expect(Object.fromEntries(runs.map((r) => [r.name, r.profile]))).toEqual(Object.fromEntries(profiles));
    expect(Object.fromEntries(runs.map((r) => [r.name, r.profile]))).toMatchObject({ grid: 'grid', conc: 'concurrent', over: 'constant' });
    expect(runs.find((r) => r.name === 'grid')?.rowsText).toBe('4 cells');
    expect(runs.find((r) => r.name === 'conc')?.rowsText).toBe('2');
    const table = await runCli(['ls', '--results', results]);
    for (const r of runs) expect(table.stdout).toMatch(new RegExp(`\\|\\s+${(r.rowsText ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+\\|\\s+predicted`));
  });

  it('shows the notes as text: no Markdown escape such as \\*', async () => {
    const view = await api<RunView>(`/api/runs/${runIdOf('over')}`);
    const overloaded = view.notes.find((n) => n.includes('overloaded'));
    expect(overloaded).toMatch(/^\* overloaded \(did not keep up with its target rate\)/);
    expect(view.notes.join('\n')).not.toMatch(/\\[*_|`]/);
  });

  it('draws the per-request histograms one row at a time, never every row pooled', async () => {
    const run = await api<RunView>(`/api/runs/${runIdOf('conc')}`);
    const req = await api<RequestsView>(`/api/runs/${runIdOf('conc')}/requests`);
    expect(req.rows.map((r) => r.label)).toEqual(run.table.rows.map((r) => r[0]));
    expect(req.rows.map((r) => r.requests)).toEqual([20, 20]);
    expect(req.firstRow).toBe(req.rows[0]?.key);
    expect(req.histograms.map((h) => h.name)).toEqual(['row-ttft', 'row-itl', 'row-e2e']);
    for (const h of req.histograms) {
      // The row picker sets `row`; the filter keeps that row's values only.
      expect(h.spec['params']).toEqual([{ name: 'row', value: req.firstRow }]);
      expect(h.spec['transform']).toEqual([{ filter: 'datum.key === row' }]);
      const values = (h.spec['data'] as { values: { key: string }[] }).values;
      for (const r of req.rows) expect(values.filter((v) => v.key === r.key)).toHaveLength(20);
    }
  });

  it("shows — in a grid cell's latency columns until its latency pass has figures", async () => {
    const done = await api<RunView>(`/api/runs/${runIdOf('grid')}`);
    const live = await api<RunView>(`/api/runs/${runIdOf('grid-live')}`);
    const ttft = done.table.headers.indexOf('Time to First Token (ms)');
    const itl = done.table.headers.indexOf('Inter Token Latency (ms)');
    expect(ttft).toBeGreaterThan(0);
    // The first three cells are whole in both; the last one's latency pass has not run in grid-live.
    expect(live.table.rows.slice(0, 3)).toEqual(done.table.rows.slice(0, 3));
    const last = live.table.rows[3] as string[];
    expect([last[ttft], last[itl]]).toEqual(['—', '—']);
    expect(last[2]).toBe(done.table.rows[3]?.[2]); // its burst's throughput is there
    expect(done.table.rows[3]?.[ttft]).toMatch(/^\d+\.\d\d$/);
  });

  it('tells a live grid\'s progress in cells (two rows each: burst, then latency pass)', () => {
    const run: LiveRun = {
      id: 'x', name: 'x', status: 'running', model: 'm', engine: 'e', profile: 'grid', plannedStages: 8, stagesDone: 3, recentErrors: [], startedAt: '', updatedAt: '',
      progress: { stage: 3, label: '128/512 latency', stageNo: '4/8', elapsedS: 1, dispatched: 1, done: 0, errors: 0, inFlight: 1 },
    };
    expect(progressText(run)).toBe('1 of 4 cells done');
    expect(progressShort(run)).toBe('1/4 cells');
    expect(rowInProgress(run)).toBe('cell 2/4 128/512 latency pass');
    expect(rowInProgress({ ...run, stagesDone: 4, progress: { ...run.progress!, stage: 4, label: '512/128', stageNo: '5/8' } })).toBe('cell 3/4 512/128 burst');
    const sweep: LiveRun = { ...run, profile: 'constant', plannedStages: 2, stagesDone: 1, progress: { ...run.progress!, stage: 1, label: 'asynchronous@4.00 req/sec', stageNo: '2/2' } };
    expect(progressText(sweep)).toBe('1 of 2 rows done');
    expect(rowInProgress(sweep)).toBe('2/2 asynchronous@4.00 req/sec');
  });
});
