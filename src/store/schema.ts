import type { z } from 'zod';
import { manifestSchema, summaryFileSchema, type ParsedManifest, type SummaryFile } from '../results/run-summary.js';

// The store reads run folders with the one results schema (src/results/): the types the code builds and the schema
// it validates with are the same declaration. Kept under these names for existing imports.

/** The newest schema this build writes; files from newer builds are read as far as their fields are known. */
export const SUPPORTED_SCHEMA_VERSION = 1;

/** summary.json: the run summary document and its schema version. */
export const summarySchema = summaryFileSchema;
export { manifestSchema };
export type ParsedSummary = SummaryFile;
export type { ParsedManifest };

/** First problem of a failed parse, as "at stages.0.label: expected string". */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const at = issue.path.length ? ` at ${issue.path.join('.')}` : '';
  return `${issue.message}${at}`;
}
