import type { CompareView, RunRow } from './api-types.js';
import { ApiFailure, getJson } from './api.js';
import { chartGrid } from './charts.js';
import { fill, h } from './dom.js';
import { bullets, errorBox, seedTable } from './format.js';
import { onLive, throttle } from './live.js';
import { ticked } from './selection.js';

/** `inferbench compare` of the ticked runs: tables with deltas, the verdict, the charts; re-read while one of them runs. */
export function comparePage(root: HTMLElement, query: URLSearchParams): () => void {
  const ids = (query.get('ids') ?? ticked().join(',')).split(',').filter((s) => /^[0-9a-f]{8}$/.test(s));
  const allow = query.get('allow') === '1';
  const body = h('div', { id: 'compare' });
  fill(root, h('h1', null, 'Compare'), body);
  if (ids.length < 2) {
    fill(body, h('p', { class: 'note' }, 'Tick two or more runs on the ', h('a', { href: '#/' }, 'Runs'), ' page, then press "Compare ticked". The first ticked run is the baseline.'));
    return () => undefined;
  }
  let names = new Set<string>();
  let gone = false;

  async function load(): Promise<void> {
    try {
      const v = await getJson<CompareView>(`/api/compare?ids=${ids.join(',')}${allow ? '&allow=1' : ''}`);
      if (gone) return;
      const runs = await getJson<{ runs: RunRow[] }>('/api/runs');
      names = new Set(runs.runs.filter((r) => ids.includes(r.id)).map((r) => r.name));
      fill(
        body,
        h('p', { class: 'note' }, `Baseline: ${v.names[0] ?? ''}. Δ columns compare each run with it.`),
        v.mismatches.length ? h('p', { class: 'warn' }, `WARNING: comparing runs that differ in ${v.mismatches.join('; ')}: the verdict does not compare like with like.`) : null,
        v.sections.map((s, i) => h('section', { data: { series: v.names[i] ?? '' } }, h('h3', null, s.heading), seedTable(s.table))),
        v.capacityRanking ? [h('h2', null, 'Capacity ranking'), seedTable(v.capacityRanking.table), bullets(v.capacityRanking.lines)] : null,
        v.verdict ? [h('h2', null, 'Verdict at matched load'), h('div', { id: 'verdict' }, seedTable(v.verdict.table)), bullets(v.verdict.lines)] : null,
        bullets(v.notes),
        h('h2', null, 'Charts'),
        h('div', { id: 'compare-charts' }, chartGrid(v.charts).el),
      );
    } catch (err) {
      if (gone) return;
      if (err instanceof ApiFailure) {
        fill(
          body,
          errorBox(err.message, err.body.hint),
          err.body.canAllow ? h('button', { id: 'compare-anyway', on: { click: () => void (location.hash = `#/compare?ids=${ids.join(',')}&allow=1`) } }, 'Compare anyway') : null,
        );
      } else fill(body, errorBox(`cannot compare: ${(err as Error).message}`));
    }
  }
  const reload = throttle(() => void load(), 1000);
  reload();
  const off = onLive((m) => {
    if (names.has(m.run.name) && (m.rowEnded || m.run.status !== 'running')) reload();
  });
  return () => {
    gone = true;
    off();
  };
}
