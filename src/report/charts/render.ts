import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';

/** resvg draws text with system fonts: name one that is installed so PNG text renders the same everywhere. */
export const CHART_FONT = 'DejaVu Sans';

/** Vega-Lite → Vega spec (the HTML report ships only the vega runtime, so specs are compiled here). */
export async function compileSpec(spec: TopLevelSpec): Promise<object> {
  const vl = await import('vega-lite');
  return vl.compile(spec).spec;
}

export async function specToSvg(spec: TopLevelSpec): Promise<string> {
  const vega = await import('vega');
  const view = new vega.View(vega.parse((await compileSpec(spec)) as never), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    background: 'white',
    fitTo: { mode: 'zoom', value: 2 },
    font: { loadSystemFonts: true, defaultFontFamily: CHART_FONT, sansSerifFamily: CHART_FONT },
  });
  return resvg.render().asPng();
}

/** vega.min.js from node_modules, inlined into the HTML report so it opens offline. */
export function vegaRuntimePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('vega')), 'vega.min.js');
}
