/**
 * The import flow of src/ (issue 30 item 7): every import points to the importer's own folder or a lower one in
 * src/layers.ts, and no file-level import cycle exists. docs/architecture.md says how to fix a failure here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildImportGraph, cycleEdges, importCycles, upwardImports, type ImportGraph } from './import-graph.js';

/**
 * Arrows tolerated while work in flight removes them: none today. Each entry must still occur, so the list cannot
 * outlive the code it excuses.
 */
const TEMPORARY_EXCEPTIONS = {
  upward: [] as string[],
  cycles: [] as string[][],
} as const;

const cycleKey = (files: readonly string[]): string => [...files].sort().join(' ');

function upwardProblems(graph: ImportGraph): string[] {
  return upwardImports(graph).map((u) => `${u.from} -> ${u.to}`);
}

function cycleProblems(graph: ImportGraph): string[] {
  return importCycles(graph).map((c) => `cycle of ${c.length} files: ${cycleEdges(graph, c).join(', ')}`);
}

describe('import flow of src/ (src/layers.ts)', () => {
  const graph = buildImportGraph();

  it('reads the whole tree', () => {
    // A sanity floor: the check must have seen the folders it rules on (ui/client, the browser bundle, is excluded).
    expect(graph.size).toBeGreaterThan(300);
    expect([...graph.keys()].some((f) => f.startsWith('ui/client/'))).toBe(false);
    expect(graph.get('store/schema.ts')?.has('results/run-summary.ts')).toBe(true);
  });

  it('has no import from a higher folder', () => {
    const allowed = new Set<string>(TEMPORARY_EXCEPTIONS.upward);
    const found = upwardProblems(graph);
    expect(found.filter((p) => !allowed.has(p)), 'imports against the flow (importer -> imported); see docs/architecture.md').toEqual([]);
    expect(TEMPORARY_EXCEPTIONS.upward.filter((p) => !found.includes(p)), 'exceptions that no longer occur: remove them').toEqual([]);
  });

  it('has no import cycle', () => {
    const allowed = new Set(TEMPORARY_EXCEPTIONS.cycles.map(cycleKey));
    const cycles = importCycles(graph);
    const unexpected = cycles.filter((c) => !allowed.has(cycleKey(c))).map((c) => `cycle: ${cycleEdges(graph, c).join(', ')}`);
    expect(unexpected, 'file-level import cycles (each import in the cycle listed)').toEqual([]);
    const present = new Set(cycles.map(cycleKey));
    expect(TEMPORARY_EXCEPTIONS.cycles.map(cycleKey).filter((k) => !present.has(k)), 'exceptions that no longer occur: remove them').toEqual([]);
  });
});

describe('the import-flow check itself', () => {
  // A tiny tree with each kind of import the check must see, and each kind of problem it must name.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'inferbench-layers-'));
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write('core/a.ts', "export const a = 1;\n");
  write('metrics/m.ts', "import { a } from '../core/a.js';\n// import { x } from '../cli/x.js'; (a comment is not an import)\nexport { l } from '../load/l.js';\nexport const m = a;\n");
  write('load/l.ts', "import type { m } from '../metrics/m.js';\nexport const l = 2;\nexport type M = typeof m;\n");
  write('load/p.ts', "export async function p(): Promise<unknown> { return import('../cli/c.js'); }\n");
  write('cli/c.ts', "import '../core/a.js';\nexport const c = 3;\n");
  write('ui/client/app.ts', "import { c } from '../../cli/c.js';\nexport const app = c;\n");
  write('ui/view.ts', "export type { App } from './client/types.js';\n");
  write('ui/client/types.ts', 'export type App = string;\n');
  const graph = buildImportGraph(root);
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('reads static, re-export, side-effect and dynamic imports, not comments, and skips ui/client', () => {
    expect([...(graph.get('metrics/m.ts') ?? [])].sort()).toEqual(['core/a.ts', 'load/l.ts']);
    expect([...(graph.get('load/p.ts') ?? [])]).toEqual(['cli/c.ts']);
    expect([...(graph.get('cli/c.ts') ?? [])]).toEqual(['core/a.ts']);
    expect(graph.has('ui/client/app.ts')).toBe(false);
    expect([...(graph.get('ui/view.ts') ?? [])]).toEqual([]);
  });

  it('names each upward import and each cycle by its files', () => {
    expect(upwardProblems(graph)).toEqual(['load/p.ts -> cli/c.ts', 'metrics/m.ts -> load/l.ts']);
    expect(cycleProblems(graph)).toEqual(['cycle of 2 files: load/l.ts -> metrics/m.ts, metrics/m.ts -> load/l.ts']);
  });

  it('refuses a folder that src/layers.ts does not list', () => {
    write('newroom/n.ts', "import { a } from '../core/a.js';\nexport const n = a;\n");
    expect(() => upwardImports(buildImportGraph(root))).toThrow(/src\/newroom\/ is not listed in src\/layers.ts/);
  });
});
