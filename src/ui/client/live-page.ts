import type { LiveRun } from './api-types.js';
import { getJson } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { fixed } from './format.js';
import { progressShort, rowInProgress } from './progress-text.js';
import { onLive } from './live.js';

/** Runs feeding this dashboard now (and the ones that just ended), with the progress of their current row. */
export function livePage(root: HTMLElement): () => void {
  const runs = new Map<string, LiveRun>();
  const list = h('div', { id: 'live-list' });
  fill(
    root,
    h('h1', null, 'Live'),
    h('p', { class: 'note' }, 'Runs written into this results folder while the dashboard serves it show here as they go (`inferbench run --ui`, or any run whose --out is in this folder).'),
    list,
  );
  function render(): void {
    const rows = [...runs.values()].reverse().map((r) => {
      const p = r.progress;
      return [
        h('span', null, h('a', { href: `#/run/${r.id}` }, r.id), badge(r.status)),
        r.name,
        r.model,
        progressShort(r),
        rowInProgress(r),
        p ? `${fixed(p.elapsedS)} s` : '—',
        p ? String(p.done) : '—',
        p ? String(p.inFlight) : '—',
        p ? String(p.errors) : '—',
      ];
    });
    fill(list, rows.length ? table(['Run', 'Folder', 'Model', 'Rows done', 'Row in progress', 'Elapsed', 'Done', 'In flight', 'Errors'], rows, 'runs') : h('p', { class: 'empty' }, 'No run is feeding this dashboard.'));
  }
  void getJson<LiveRun[]>('/api/live').then((all) => {
    for (const r of all) runs.set(r.name, r);
    render();
  });
  return onLive((m) => {
    runs.set(m.run.name, m.run);
    render();
  });
}
