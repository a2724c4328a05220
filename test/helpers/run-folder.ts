import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { RunSummaryDoc } from '../../src/report/run-summary.js';

/** A run folder's summary.json and requests.jsonl, parsed. */
export function readRunFolder(dir: string): { doc: RunSummaryDoc & { complete?: boolean }; records: RequestRecord[] } {
  const doc = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummaryDoc & { complete?: boolean };
  const records = readFileSync(join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { doc, records };
}
