import type { ChartJson } from './api-types.js';
import { h } from './dom.js';

/** The parts of the vega and vega-lite runtimes (served from node_modules as globals) the dashboard uses. */
export interface VegaView {
  runAsync(): Promise<VegaView>;
  signal(name: string, value: unknown): VegaView;
  change(name: string, changeset: unknown): VegaView;
  finalize(): void;
}
declare const vega: {
  View: new (runtime: unknown, opts: { renderer: string; container: Element; hover: boolean }) => VegaView;
  parse(spec: unknown): unknown;
  changeset(): { insert(values: unknown[]): unknown };
};
declare const vegaLite: { compile(spec: unknown): { spec: unknown } };

export interface Chart {
  figure: HTMLElement;
  ready: Promise<VegaView | undefined>;
}

/** Views drawn, with their containers: finalized (timers and listeners with them) when the page changes or they leave it. */
const views = new Map<VegaView, Element>();

export function disposeCharts(): void {
  for (const v of views.keys()) v.finalize();
  views.clear();
}

/**
 * A live page re-draws its charts after every row: the views it replaced are finalized here. Run after the
 * current task, when the new charts are in the page and the old ones are out of it.
 */
let pruneQueued = false;
function pruneDetached(): void {
  if (pruneQueued) return;
  pruneQueued = true;
  setTimeout(() => {
    pruneQueued = false;
    for (const [v, el] of views) {
      if (!el.isConnected) {
        v.finalize();
        views.delete(v);
      }
    }
  }, 0);
}

/**
 * A figure with one chart: the Vega-Lite spec is compiled in the browser and drawn as SVG. Its text (a model
 * name in a legend) goes into SVG text nodes, never parsed as markup.
 */
export function chart(def: ChartJson): Chart {
  const container = h('div', { class: 'view' });
  const figure = h('figure', { class: 'chart', data: { chart: def.name } }, container);
  const ready = (async () => {
    try {
      pruneDetached();
      const view = new vega.View(vega.parse(vegaLite.compile(def.spec).spec), { renderer: 'svg', container, hover: true });
      views.set(view, container);
      await view.runAsync();
      return view;
    } catch (err) {
      container.textContent = `chart failed: ${(err as Error).message}`;
      console.error(err);
      return undefined;
    }
  })();
  return { figure, ready };
}

export function chartGrid(defs: readonly ChartJson[]): { el: HTMLElement; ready: Promise<(VegaView | undefined)[]> } {
  const charts = defs.map(chart);
  return { el: h('div', { class: 'charts' }, charts.map((c) => c.figure)), ready: Promise.all(charts.map((c) => c.ready)) };
}

/** New rows of the named data set (the live scatter's `points`): the chart grows without a redraw. */
export async function insertPoints(view: VegaView, rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  await view.change('points', vega.changeset().insert(rows.map((r) => ({ ...r })))).runAsync();
}
