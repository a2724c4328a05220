import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeWindowRules } from '../../src/cli/window-rules.js';
import { WINDOW_DOC_FIGURES, windowDocSections, withWindowDocSections } from '../../src/cli/window-rules-doc.js';
import { resolveRunOptions } from '../../src/config/run-options.js';
import { ADAPTIVE_CAP } from '../../src/load/profiles.js';
import { DEFAULT_EXTEND_FACTOR, DEFAULT_MIN_SAMPLES, MAX_WINDOW_MS, SAMPLE_WINDOW_MAX_MS } from '../../src/load/window.js';

const METRICS_MD = new URL('../../docs/metrics.md', import.meta.url);

/** docs/metrics.md and the printed window rules state the constants the window code uses (read only; writes nothing). */
describe('window rules from the constants', () => {
  it('docs/metrics.md: the generated window sections are what the constants say now', () => {
    const doc = readFileSync(METRICS_MD, 'utf8');
    const fresh = withWindowDocSections(doc);
    // On a mismatch: `npx tsx scripts/gen-window-docs.ts` rewrites the sections.
    expect(doc, 'docs/metrics.md is out of date with the window constants: run npx tsx scripts/gen-window-docs.ts').toBe(fresh);
    for (const text of Object.values(windowDocSections())) expect(doc).toContain(text);
  });

  it('the sections follow the figures: a changed constant changes the text', () => {
    const changed = windowDocSections({ ...WINDOW_DOC_FIGURES, minSamples: 30, capStart: 8, capMinGain: 0.2, confirmMs: 400, latencyRise: 1.5, maxWindowMs: 900_000 });
    expect(changed['window-phases']).toContain('until at least 30 requests');
    expect(changed['window-phases']).toContain('(up to 15 minutes)');
    expect(changed['window-cap-search']).toContain('starts at 8 and is multiplied by 4');
    expect(changed['window-cap-search']).toContain('by 20% or more');
    expect(changed['window-cap-search']).toContain('still gained 10%');
    expect(changed['window-saturation-stop']).toContain('400 ms after they first did');
    expect(changed['window-saturation-stop']).toContain('is half above the first ones');
    expect(() => withWindowDocSections('no markers here')).toThrow(/no generated section "window-phases"/);
  });

  it('the printed rules quote the same constants', () => {
    const text = describeWindowRules(resolveRunOptions({ profile: 'sweep' }, {}));
    expect(text).toContain(`cap ×${ADAPTIVE_CAP.growth} from ${ADAPTIVE_CAP.start} while the completion rate still grows ${ADAPTIVE_CAP.minGain * 100}%`);
    expect(text).toContain(`kept open up to ${5 * DEFAULT_EXTEND_FACTOR} s until ${DEFAULT_MIN_SAMPLES} requests`);
    expect(text).toContain(`up to ${MAX_WINDOW_MS / 60_000} min`);
    // A sweep's rows are sized to hold their requests; a throughput row's search comes down to the server's slots.
    expect(text).toContain(`a sweep's rows are kept open past ${5 * DEFAULT_EXTEND_FACTOR} s for their ${DEFAULT_MIN_SAMPLES} requests as long as these take at the rate the row sends (a quarter more), up to ${SAMPLE_WINDOW_MAX_MS / 1000} s`);
    expect(text).toContain('down to what the server serves at once where requests queue there');
    expect(describeWindowRules(resolveRunOptions({ profile: 'concurrent', concurrency: '4' }, {}))).not.toContain("a sweep's rows");
  });
});
