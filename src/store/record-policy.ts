import { configError } from '../core/errors.js';
import type { RequestRecord } from '../metrics/record.js';

/**
 * What of each request goes to requests.jsonl. Summaries always use every request; this only bounds
 * the disk: `full` (default), `no-gaps` (drop the per-chunk gap list, the bulk of a long reply's line),
 * `sample:P` (keep a seeded fraction P of the lines, failures always kept) or `none`.
 */
export type RecordPolicy = { kind: 'full' } | { kind: 'no-gaps' } | { kind: 'sample'; fraction: number } | { kind: 'none' };

export function parseRecordPolicy(text: string): RecordPolicy {
  const t = text.trim();
  if (t === 'full' || t === 'no-gaps' || t === 'none') return { kind: t };
  const m = /^sample:(0?\.\d+|1(\.0*)?|0)$/.exec(t);
  if (m) return { kind: 'sample', fraction: Number(m[1]) };
  throw configError(`--records ${JSON.stringify(text)} is not known`, 'use full, no-gaps, sample:FRACTION (e.g. sample:0.1) or none');
}

/** The record as it should be written, or undefined to skip it. Deterministic per request id. */
export function applyRecordPolicy(policy: RecordPolicy, record: RequestRecord): RequestRecord | undefined {
  switch (policy.kind) {
    case 'full':
      return record;
    case 'none':
      return undefined;
    case 'no-gaps':
      return { ...record, chunkGapsMs: [] };
    case 'sample': {
      if (record.status !== 'ok') return record;
      // A multiplicative hash of the id: the same requests are kept on every run with the same seed.
      const u = (Math.imul(record.id + 1, 0x9e3779b1) >>> 0) / 4294967296;
      return u < policy.fraction ? record : undefined;
    }
  }
}
