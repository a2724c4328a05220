// The one results schema (zod): request records, stage summaries, summary.json, manifest.json, and the metric names.
// Every results type in the code is derived from these schemas; src/layers.ts keeps this folder just above core/.
export * from './metric-names.js';
export * from './stats.js';
export * from './record.js';
export * from './energy.js';
export * from './stage.js';
export * from './capacity.js';
export * from './run-summary.js';
