import type { IntervalData } from './intervals.js';

/** Placeholder until fit.ts --loto --write-intervals writes it. */
export const INTERVAL_DATA: IntervalData = { source: 'none', model: { cells: {}, novel: {}, seen: { gpu: {}, engine: {}, family: {}, quant: {} } }, coverage80: [] };
