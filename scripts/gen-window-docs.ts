/**
 * Rewrites the generated sections of docs/metrics.md (the steady window's rules) from the constants the code uses:
 * `npx tsx scripts/gen-window-docs.ts`. test/cli/window-rules-doc.test.ts fails until this has been run after a
 * change to those constants.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withWindowDocSections } from '../src/cli/window-rules-doc.js';

const path = fileURLToPath(new URL('../docs/metrics.md', import.meta.url));
const before = readFileSync(path, 'utf8');
const after = withWindowDocSections(before);
if (after === before) {
  console.log('docs/metrics.md: the window rules are up to date');
} else {
  writeFileSync(path, after);
  console.log('docs/metrics.md: rewrote the window rules from the constants');
}
