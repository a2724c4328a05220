import type { LiveMessage, LiveRun, LiveSnapshot, RequestsView, RunPending, RunView, TelemetryView } from './api-types.js';
import { ApiFailure, getJson } from './api.js';
import { chart, chartGrid, insertPoints } from './charts.js';
import { badge, fill, h, table } from './dom.js';
import { bullets, errorBox, fixed, seedTable } from './format.js';
import { progressText, rowInProgress } from './progress-text.js';
import { onLive, throttle } from './live.js';

type View = Awaited<ReturnType<typeof chart>['ready']>;

/** One run: its seed table, every report chart, per-request distributions, telemetry, metadata; live while it runs. */
export function runPage(root: HTMLElement, id: string): () => void {
  const title = h('h1', null, `Run ${id}`);
  const livePanel = h('div', { id: 'live-panel' });
  const main = h('div', { id: 'run-main' });
  const extras = h('div', { id: 'run-extras' });
  fill(root, title, livePanel, main, extras);

  let live: LiveRun | undefined;
  let scatter: View;
  let scatterPending: object[] = [];
  let gone = false;
  let starting = false;

  function renderLive(run: LiveRun): void {
    const p = run.progress;
    const stat = (value: string, label: string, key: string): HTMLElement => h('div', { class: 'stat', data: { stat: key } }, h('b', null, value), h('span', null, label));
    const rate = p && p.elapsedS > 0 ? p.done / p.elapsedS : 0;
    fill(
      livePanel.querySelector('.live-state') ?? livePanel.appendChild(h('div', { class: 'live-state' })),
      h('p', null, 'Live: ', badge(run.status), ` ${run.profile} profile, ${progressText(run)}`, run.exitCode !== undefined ? ` (exit code ${run.exitCode})` : ''),
      p && run.status === 'running'
        ? h('div', { class: 'stats' }, stat(rowInProgress(run), 'row in progress', 'row'), stat(`${fixed(p.elapsedS)} s`, 'elapsed in row', 'elapsed'), stat(String(p.done), 'done', 'done'), stat(String(p.inFlight), 'in flight', 'in-flight'), stat(fixed(rate, 2), 'req/s', 'rate'), stat(String(p.errors), 'errors', 'errors'))
        : null,
      run.recentErrors.length ? h('div', null, h('h3', null, 'Latest failures'), bullets(run.recentErrors.slice(-5), 'notes warn')) : null,
    );
  }

  async function startLive(snap: LiveSnapshot): Promise<void> {
    starting = true;
    live = snap.run;
    fill(livePanel);
    livePanel.className = 'live-panel';
    renderLive(snap.run);
    const c = chart(snap.chart);
    livePanel.appendChild(c.figure);
    scatter = await c.ready;
    if (scatter && scatterPending.length) await insertPoints(scatter, scatterPending);
    scatterPending = [];
  }

  function renderMain(v: RunView): void {
    title.textContent = `${v.row.model} — ${v.row.series}`;
    fill(
      main,
      h('p', { class: 'note' }, `Run ${v.row.id} · ${v.row.name} · created ${v.row.createdAt} UTC · ${v.row.tool}`),
      v.warnings.length ? bullets(v.warnings, 'notes warn') : null,
      h('h2', null, 'Table'),
      h('h3', null, v.heading),
      h('div', { id: 'run-table' }, seedTable(v.table)),
      v.capacityVerdict ? h('p', null, h('b', null, v.capacityVerdict)) : null,
      bullets(v.notes),
      v.healthLine ? h('p', { class: 'note' }, v.healthLine) : null,
      h('details', null, h('summary', null, 'How each row\'s window was measured'), h('p', { class: 'note' }, v.windowRules)),
      h('h2', null, 'Charts'),
      v.charts.length ? chartGrid(v.charts).el : h('p', { class: 'note' }, 'No chart: no row has figures yet.'),
    );
  }

  function renderMeta(v: RunView): HTMLElement {
    return h(
      'div',
      null,
      h('h2', null, 'Metadata and command line'),
      h('pre', { id: 'run-command' }, v.command),
      table(['', ''], v.metadata.map(([k, val]) => [k, val]), 'kv'),
      v.manifest ? h('details', null, h('summary', null, 'manifest.json (secrets redacted)'), h('pre', null, JSON.stringify(v.manifest, null, 2))) : null,
    );
  }

  async function loadExtras(v: RunView): Promise<void> {
    const [req, tel] = await Promise.all([
      v.hasRequests ? getJson<RequestsView>(`/api/runs/${id}/requests`) : undefined,
      v.hasTelemetry || v.hasPower ? getJson<TelemetryView>(`/api/runs/${id}/telemetry`) : undefined,
    ]);
    if (gone) return;
    fill(
      extras,
      h('h2', null, 'Per-request distributions'),
      req
        ? h(
            'div',
            { id: 'run-dists' },
            h('p', { class: 'note' }, `${req.ok} of ${req.total} measured requests succeeded${req.sampled ? '; charts draw a seeded sample' : ''}${req.badLines ? `; ${req.badLines} lines of requests.jsonl are not JSON (skipped)` : ''}.`),
            rowHistograms(req),
            req.scatter ? chartGrid([req.scatter]).el : null,
            h('h3', null, 'Failures'),
            req.errors.length ? table(['Requests', 'Error'], req.errors.map(([msg, n]) => [String(n), msg])) : h('p', { class: 'note' }, 'No failed request in the measured windows.'),
          )
        : h('p', { class: 'note' }, 'No requests.jsonl in this run folder (an imported summary, or --records none).'),
      h('h2', null, 'Server telemetry over time'),
      tel && tel.charts.length ? h('div', { id: 'run-telemetry' }, chartGrid(tel.charts).el) : h('p', { class: 'note' }, v.hasTelemetry || v.hasPower ? 'telemetry.jsonl and power.jsonl have no reading the charts draw.' : 'No telemetry: the server had no Prometheus /metrics, or the run is still going (telemetry.jsonl and power.jsonl are written at its end).'),
      renderMeta(v),
    );
  }

  /**
   * The histograms of one row at a time, picked like the HTML report's row picker: each chart holds every row's
   * sample and its `row` signal keeps one row's, so a histogram always describes one load point.
   */
  function rowHistograms(req: RequestsView): HTMLElement | null {
    if (req.histograms.length === 0) return null;
    const grid = chartGrid(req.histograms);
    const pick = async (key: string): Promise<void> => {
      for (const view of await grid.ready) await view?.signal('row', key).runAsync();
    };
    const select = h(
      'select',
      { id: 'dist-row', on: { change: () => void pick(select.value) } },
      req.rows.map((r) => h('option', { value: r.key }, `${r.label} (${r.requests} ok)`)),
    );
    select.value = req.firstRow;
    return h('div', { id: 'dist-rows' }, h('label', { class: 'picker' }, 'Row: ', select, h('span', { class: 'note' }, ' the histograms show one row at a time, never every row pooled')), grid.el);
  }

  async function loadView(): Promise<void> {
    try {
      const v = await getJson<RunView | RunPending>(`/api/runs/${id}`);
      if (gone) return;
      if ('pending' in v) {
        title.textContent = `${v.live.model} — ${v.live.name}`;
        fill(main, h('p', { class: 'note', id: 'run-pending' }, 'No row has finished yet: the table fills as rows finish.'));
        return;
      }
      renderMain(v);
      await loadExtras(v);
    } catch (err) {
      fill(main, errorBox(err instanceof ApiFailure ? err.message : `cannot load run ${id}: ${(err as Error).message}`, err instanceof ApiFailure ? err.body.hint : undefined));
    }
  }

  const reloadView = throttle(() => void loadView(), 400);
  void (async () => {
    const snap = await getJson<LiveSnapshot | null>(`/api/live/${id}`).catch(() => null);
    if (snap && !gone) await startLive(snap);
    await loadView();
  })();

  const off = onLive((m: LiveMessage) => {
    if (m.run.id !== id || gone) return;
    const wasRunning = live?.status === 'running';
    if (!live) {
      // The run began after this page opened: its snapshot brings the chart and the points so far.
      if (!starting) {
        starting = true;
        void getJson<LiveSnapshot | null>(`/api/live/${id}`).then((snap) => (snap && !gone ? startLive(snap) : undefined)).then(reloadView);
      }
      return;
    }
    live = m.run;
    renderLive(m.run);
    if (scatter) void insertPoints(scatter, m.points);
    else scatterPending.push(...m.points);
    // A finished row rewrote summary.json: the table gains its row and the charts their points.
    if (m.rowEnded || (wasRunning && m.run.status !== 'running')) reloadView();
  });
  return () => {
    gone = true;
    off();
  };
}
