/** What a merged run records about where it came from (summary.json `merged`): the results schema's type. */
export type { MergedFrom } from '../results/run-summary.js';
