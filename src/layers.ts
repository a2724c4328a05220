/**
 * The import flow of `src/`, stated once: folders from LOW to HIGH. A file may import from its own folder or from a
 * folder earlier in this list, never from a later one; files directly in `src/` (this file, index.ts) are the top.
 * Folders in one inner array are peers on the same level and must not import each other.
 * test/architecture/import-flow.test.ts reads this list and fails on an import against it or on any import cycle;
 * docs/architecture.md explains the order and how to add a folder.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['results'],
  ['dialects'],
  ['transport', 'workload'],
  ['metrics'],
  ['load'],
  // launch/: start, wait ready, stop inference servers as processes (matrix cells, plan --verify).
  // power/: GPU power sources and the energy of a row's window; it reads load/'s rows and metrics, sim/ and runplan/ use it.
  // Peers: neither imports the other.
  ['launch', 'power'],
  ['store'],
  ['distributed'],
  ['sim'],
  // interop/ below report/: report renders imported runs' notes (interop/definitions.ts) and llm-d exports, while
  // importers only map other tools' files into the results schema (LAYERS.md allowed this swap).
  ['interop'],
  ['report'],
  // gate/: statistical comparison of saved runs for CI (verdicts, exit codes, JUnit/Markdown); reads report's comparability.
  ['gate'],
  ['config'],
  ['runplan'],
  ['plan'],
  // matrix/: many server configurations, each launched (launch/), measured (runplan/) and compared (report/).
  // verify/: plan --verify — launch the plan's top candidates (launch/), measure them, set measured beside predicted.
  // Peers: neither imports the other.
  ['matrix', 'verify'],
  ['k8s'],
  ['ui'],
  ['cli'],
];

/** Folders left out of the check: `ui/client` is a separate browser bundle with its own tsconfig. */
export const LAYER_CHECK_EXCLUDED = ['ui/client'] as const;
