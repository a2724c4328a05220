import type { RequestRecord } from '../results/record.js';

// The record's shape is the results schema's (src/results/record.ts); re-exported for the many files importing it here.
export type { RequestRecord };


/** A failed or cut request's error as one line: `CODE: message`. */
export function errorText(r: Pick<RequestRecord, 'error'>): string | undefined {
  return r.error ? `${r.error.code}: ${r.error.message}` : undefined;
}
