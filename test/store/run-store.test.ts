import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferbenchError } from '../../src/core/errors.js';
import { readRunDetails } from '../../src/store/run-details.js';
import { listRuns, matchesFilter, openRunDir, resolveRun, runIdOf } from '../../src/store/run-store.js';
import { makeFixtures, type Fixtures } from '../report/fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures();
});
afterAll(() => rmSync(fx.root, { recursive: true, force: true }));

const configErrorOf = (f: () => unknown): InferbenchError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InferbenchError);
    return err as InferbenchError;
  }
  throw new Error('expected an error');
};

describe('run store', () => {
  it('gives each folder a stable 8-hex id and lists runs oldest first (by createdAt)', () => {
    expect(runIdOf('20261101-100000-grid-vllm')).toBe(runIdOf('20261101-100000-grid-vllm'));
    expect(runIdOf('20261101-100000-grid-vllm')).toMatch(/^[0-9a-f]{8}$/);
    const runs = listRuns(fx.results);
    expect(runs.map((r) => r.name).sort()).toEqual(['20261101-100000-grid-vllm', '20261102-100000-grid-tgi']);
    const created = runs.map((r) => r.run?.summary.createdAt ?? '');
    expect([...created].sort()).toEqual(created);
    expect(runs.find((r) => r.name.endsWith('tgi'))?.run?.summary.context.label).toBe('tgi-baseline');
  });

  it('resolves a run by path, folder name, full id and unique id prefix', () => {
    const id = runIdOf('20261102-100000-grid-tgi');
    for (const ref of [fx.gridTgi, join(fx.gridTgi, 'summary.json'), '20261102-100000-grid-tgi', id, id.slice(0, 5)]) {
      expect(resolveRun(ref, fx.results).id).toBe(id);
    }
  });

  it('rejects an unknown run with a hint that names `inferbench ls`', () => {
    const err = configErrorOf(() => resolveRun('deadbeef', fx.results));
    expect(err.code).toBe('E_CONFIG');
    expect(err.message).toContain('unknown run "deadbeef"');
    expect(err.hint).toContain('inferbench ls');
  });

  it('filters by engine, label, model and date', () => {
    const byName = (end: string) => listRuns(fx.results).find((r) => r.name.endsWith(end))!.run!;
    const [vllm, tgi] = [byName('vllm'), byName('tgi')];
    expect(matchesFilter(tgi!, { engine: 'TGI' })).toBe(true);
    expect(matchesFilter(vllm!, { engine: 'tgi' })).toBe(false);
    expect(matchesFilter(tgi!, { label: 'baseline', model: 'qwen2-7b' })).toBe(true);
    expect(matchesFilter(tgi!, { since: new Date(Date.now() + 86_400_000) })).toBe(false);
  });

  it('reads an older summary (no schemaVersion, fewer fields) and a newer one (unknown fields) alike', () => {
    const dir = join(fx.root, 'schema-runs');
    const older = join(dir, 'older');
    const newer = join(dir, 'newer');
    cpSync(fx.gridVllm, older, { recursive: true });
    cpSync(fx.gridVllm, newer, { recursive: true });
    const doc = JSON.parse(readFileSync(join(fx.gridVllm, 'summary.json'), 'utf8')) as Record<string, unknown> & { stages: Record<string, unknown>[] };
    const { schemaVersion: _v, notes: _n, windowRules: _w, ...old } = doc;
    old.stages = doc.stages.map(({ belowTarget: _b, tokenCountSources: _t, sendRate: _s, ...s }) => s);
    writeFileSync(join(older, 'summary.json'), JSON.stringify(old));
    writeFileSync(join(newer, 'summary.json'), JSON.stringify({ ...doc, schemaVersion: 7, gpuTelemetry: { power: [1, 2] } }));

    const o = openRunDir(older);
    expect(o.schemaVersion).toBe(1);
    expect(o.summary.stages[0]?.belowTarget).toBe(false);
    expect(o.warnings).toEqual([]);
    const n = openRunDir(newer);
    expect(n.schemaVersion).toBe(7);
    expect(n.warnings[0]).toContain('newer');
    expect(n.summary).not.toHaveProperty('gpuTelemetry');
    // 2×2 grid: each cell has its burst and its latency pass.
    expect(n.summary.stages).toHaveLength(8);
  });

  it('turns a corrupt summary into one line naming the file', () => {
    const bad = join(fx.root, 'bad-runs', 'broken');
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'summary.json'), '{"layout": "grid", "stages": [');
    const err = configErrorOf(() => openRunDir(bad));
    expect(err.message).toContain('summary.json is not valid JSON');
    expect(err.message).not.toContain('\n');
    writeFileSync(join(bad, 'summary.json'), JSON.stringify({ layout: 'cube', context: { model: 'm', engine: 'e' }, stages: [] }));
    expect(configErrorOf(() => openRunDir(bad)).message).toMatch(/not an inferbench run summary .*layout/);
    const listed = listRuns(join(fx.root, 'bad-runs'));
    expect(listed[0]?.error).toContain('layout');
  });
});

describe('requests.jsonl sample', () => {
  it('keeps at most `limit` values per metric and row, deterministically, and skips a torn last line', async () => {
    const dir = join(fx.root, 'torn');
    cpSync(fx.gridVllm, dir, { recursive: true });
    appendFileSync(join(dir, 'requests.jsonl'), '{"id": 9999, "stage": 0, "status": "ok", "ttf');
    const a = await readRunDetails(dir, { perRowLimit: 25 });
    const b = await readRunDetails(dir, { perRowLimit: 25 });
    // 4 cells × (30 burst + 10 latency-pass requests); the latency passes' ramp-up requests are left out.
    expect(a.total).toBe(160);
    expect(a.ok).toBe(160);
    // A burst row holds 30 successes: its sample keeps 25 of them.
    const lengths = [...a.perRow.values()].map((r) => r.ttftMs.length);
    expect(Math.max(...lengths)).toBe(25);
    expect(a.sampled).toBe(true);
    expect([...a.perRow.entries()]).toEqual([...b.perRow.entries()]);
    expect(a.badLines).toBe(1);
  });
});
