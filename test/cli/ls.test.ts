import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import-command.js';
import { lsCommand } from '../../src/cli/ls-command.js';
import { predictCommand } from '../../src/cli/predict-command.js';
import { resolveRunOptions } from '../../src/config/run-options.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import { serverCell } from '../../src/report/layouts.js';
import { runCli } from '../helpers/cli.js';

const PEER = 'test/fixtures/peer-outputs/guidellm-0.7-llamacpp-c8-n50.json';

function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  const s = new PassThrough();
  let out = '';
  s.on('data', (d: Buffer) => (out += d.toString()));
  return { stream: s as unknown as NodeJS.WriteStream, text: () => out };
}

interface Listed {
  name: string;
  profile: string;
  engine: string;
  kind: string;
  context: { label?: string; engineVersion?: string };
}

describe('inferbench ls (issue 17, item 10)', () => {
  let results: string;
  let table: string;
  let listed: Listed[];
  beforeAll(async () => {
    results = mkdtempSync(join(tmpdir(), 'inferbench-ls-'));
    // Measured against the built-in simulator (it reports vLLM 0.11.0 at /version), no --engine-version given.
    const measured = await runCli(['run', '--rate', 'inf', '--max-requests', '4', '--tokenizer', 'approx', '--out', join(results, 'measured'), '--label', 'mine', '--no-progress']);
    expect(measured.code, measured.stderr).toBe(0);
    const quiet = { stdout: capture().stream, stderr: capture().stream };
    await predictCommand(resolveRunOptions({ rate: '2,4', out: join(results, 'predicted'), label: 'mine' }, {}), quiet);
    await predictCommand(resolveRunOptions({ profile: 'grid', inputLens: '128,256', outputLens: '64', out: join(results, 'grid') }, {}), quiet);
    importCommand([PEER], { results }, quiet);
    // A run stopped by Ctrl-C in its first row: nothing finished, every request cut, none failed.
    const cut = join(results, 'cut');
    cpSync(join(results, 'measured'), cut, { recursive: true });
    const doc = JSON.parse(readFileSync(join(cut, 'summary.json'), 'utf8')) as { interrupted: boolean; stages: StageSummary[] };
    doc.interrupted = true;
    for (const s of doc.stages) Object.assign(s.requests, { ok: 0, errors: 0, incomplete: s.requests.total });
    writeFileSync(join(cut, 'summary.json'), JSON.stringify(doc));

    const out = capture();
    expect(lsCommand({ results }, { stdout: out.stream, stderr: capture().stream })).toBe(0);
    table = out.text();
    const json = capture();
    lsCommand({ results, json: true }, { stdout: json.stream, stderr: capture().stream });
    listed = JSON.parse(json.text()) as Listed[];
  }, 60_000);
  afterAll(() => rmSync(results, { recursive: true, force: true }));

  const split = (line: string): string[] => line.split('|').map((c) => c.trim()).slice(1, -1);
  /** The cells of the row whose last column (Folder) is `name`. */
  const cells = (name: string): string[] => split(table.split('\n').find((l) => split(l).at(-1) === name) ?? '');
  const column = (header: string, name: string): string => {
    const headers = split(table.split('\n')[0] ?? '');
    return cells(name)[headers.indexOf(header)] ?? '';
  };

  it('names the engine the same way for measured and predicted runs, with the version detection read', () => {
    expect(column('Engine', 'measured')).toBe('vllm 0.11.0 (simulated)');
    expect(column('Engine', 'predicted')).toBe('vllm (simulated)');
    expect(listed.find((r) => r.name === 'measured')?.context.engineVersion).toBe('0.11.0');
    expect(listed.find((r) => r.name === 'predicted')?.engine).toBe('vllm (simulated)');
  });

  it('keeps the label as given and says predicted / measured / imported in a column of its own', () => {
    expect(column('Label', 'measured')).toBe('mine');
    expect(column('Label', 'predicted')).toBe('mine');
    expect(column('Source', 'measured')).toBe('measured');
    expect(column('Source', 'predicted')).toBe('predicted');
    const imported = listed.find((r) => r.kind === 'imported');
    expect(imported?.context.label).toBe('guidellm 0.7.3.post0+gee7a774');
    expect(column('Source', imported?.name ?? '?')).toBe('imported (guidellm)');
    expect(table).not.toMatch(/\((predicted|imported)[^)]*\) *\|[^|]*\|$/m);
  });

  it("shows each run's profile, and a grid's rows as cells", () => {
    expect(column('Profile', 'predicted')).toBe('constant');
    expect(column('Profile', 'grid')).toBe('grid');
    expect(column('Rows', 'grid')).toBe('2 cells');
    expect(column('Rows', 'predicted')).toBe('2');
    expect(listed.map((r) => r.profile).sort()).toEqual(['concurrent', 'constant', 'constant', 'constant', 'grid']);
  });

  it('never calls a cut row failed', () => {
    expect(column('Rows', 'cut')).toBe('1 (1 cut, interrupted)');
    expect(table).not.toContain('failed');
  });

  it('the telemetry column reads — for a row with fewer than two /metrics samples', () => {
    const server = { peakRunning: 4, peakWaiting: 0, peakKvUsage: 0.01 };
    expect(serverCell({ server: { samples: 1, ...server } } as StageSummary)).toBe('—');
    expect(serverCell({ server: { samples: 2, ...server } } as StageSummary)).toBe('4 / 0 / 1%');
  });
});
