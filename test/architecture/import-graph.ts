/**
 * Reads every `src/**\/*.ts` file's imports (static `import … from`, `export … from`, side-effect `import '…'`,
 * dynamic `import('…')`, type-only imports included) into a file-level graph, and checks it against src/layers.ts:
 * imports that run up the layer order, and file-level import cycles (strongly connected components).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { LAYERS, LAYER_CHECK_EXCLUDED } from '../../src/layers.js';

export const SRC_DIR = path.resolve(import.meta.dirname, '../../src');

/** file (relative to src/, '/'-separated) → the src files it imports. */
export type ImportGraph = Map<string, Set<string>>;

function isExcluded(relPath: string): boolean {
  return LAYER_CHECK_EXCLUDED.some((ex) => relPath === ex || relPath.startsWith(`${ex}/`));
}

function listSourceFiles(dir: string, rel = ''): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const relPath = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...listSourceFiles(path.join(dir, entry.name), relPath));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(relPath);
  }
  return files;
}

/** Resolves a relative specifier written as NodeNext wants it ('./x.js' → 'x.ts', './dir/index.js'). */
function resolveSpecifier(fromFile: string, spec: string, known: Set<string>): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), spec));
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => known.has(c));
}

export function buildImportGraph(srcDir = SRC_DIR): ImportGraph {
  const allFiles = listSourceFiles(srcDir);
  const known = new Set(allFiles);
  // The excluded bundle's files are known (so imports of them resolve) but neither read nor counted as targets.
  const files = allFiles.filter((f) => !isExcluded(f));
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const text = fs.readFileSync(path.join(srcDir, file), 'utf8');
    // preProcessFile finds import/export-from declarations, require and dynamic import() calls, skipping comments.
    const info = ts.preProcessFile(text, true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      const target = resolveSpecifier(file, ref.fileName, known);
      if (ref.fileName.startsWith('.') && target === undefined) {
        throw new Error(`${file}: cannot resolve import '${ref.fileName}'`);
      }
      if (target !== undefined && target !== file && !isExcluded(target)) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The folder a file belongs to for layering: its first path segment, or '' for files directly in src/. */
export function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash < 0 ? '' : file.slice(0, slash);
}

const TOP_RANK = LAYERS.length;

/** A folder's rank in src/layers.ts; files directly in src/ rank above every folder; unknown folders throw. */
export function rankOf(folder: string): number {
  if (folder === '') return TOP_RANK;
  const rank = LAYERS.findIndex((level) => level.includes(folder));
  if (rank < 0) throw new Error(`src/${folder}/ is not listed in src/layers.ts: add it at its level`);
  return rank;
}

export interface UpwardImport { from: string; to: string }

/** Imports whose target folder is higher than the importer's, or a peer folder on the same level. */
export function upwardImports(graph: ImportGraph): UpwardImport[] {
  const found: UpwardImport[] = [];
  for (const [from, targets] of graph) {
    const fromFolder = folderOf(from);
    for (const to of targets) {
      const toFolder = folderOf(to);
      if (toFolder === fromFolder) continue;
      if (rankOf(toFolder) >= rankOf(fromFolder)) found.push({ from, to });
    }
  }
  return found.sort((a, b) => (a.from + a.to).localeCompare(b.from + b.to));
}

/** File-level import cycles: the strongly connected components with more than one file (Tarjan). */
export function importCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) visit(node);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The import edges inside one cycle, as 'a.ts -> b.ts' pairs, so a failure names the files to untangle. */
export function cycleEdges(graph: ImportGraph, cycle: readonly string[]): string[] {
  const members = new Set(cycle);
  const edges: string[] = [];
  for (const from of cycle) {
    for (const to of graph.get(from) ?? []) if (members.has(to)) edges.push(`${from} -> ${to}`);
  }
  return edges.sort();
}
