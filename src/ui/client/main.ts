import { disposeCharts } from './charts.js';
import { comparePage } from './compare-page.js';
import { h, fill } from './dom.js';
import { connectLive } from './live.js';
import { livePage } from './live-page.js';
import { matricesPage, matrixPage } from './matrix-page.js';
import { runPage } from './run-page.js';
import { runsPage } from './runs-page.js';

/**
 * A single page with hash routes: #/ (runs), #/run/ID, #/compare?ids=A,B[&allow=1], #/live, #/matrices, #/matrix/NAME. Each page returns
 * what stops it (listeners, charts) when another is shown.
 */
let stop: (() => void) | undefined;

function route(): void {
  const app = document.getElementById('app') as HTMLElement;
  stop?.();
  disposeCharts();
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', q = ''] = hash.split('?');
  const query = new URLSearchParams(q);
  const run = /^\/run\/([0-9a-f]{8})$/.exec(path);
  const matrix = /^\/matrix\/(.+)$/.exec(path);
  const page = run ? 'runs' : matrix ? 'matrices' : path.replace(/^\//, '') || 'runs';
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', (a as HTMLElement).dataset['nav'] === page);
  window.scrollTo(0, 0);
  if (run) stop = runPage(app, run[1] as string);
  else if (path === '/compare') stop = comparePage(app, query);
  else if (path === '/live') stop = livePage(app);
  else if (path === '/matrices') stop = matricesPage(app);
  else if (matrix) stop = matrixPage(app, decodeURIComponent(matrix[1] as string));
  else if (path === '/') stop = runsPage(app);
  else {
    fill(app, h('p', { class: 'empty' }, 'No such page. ', h('a', { href: '#/' }, 'Back to the runs')));
    stop = undefined;
  }
}

connectLive(document.getElementById('conn'));
window.addEventListener('hashchange', route);
// vega and vega-lite load with `defer`; module scripts run after them.
route();
