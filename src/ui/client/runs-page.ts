import type { RunRow } from './api-types.js';
import { getJson } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { onLive, onRuns, throttle } from './live.js';
import { clearTicked, setTicked, ticked } from './selection.js';

/** Filter values, kept while the tab is open (going to a run and back keeps them). */
const filters = { model: '', engine: '', gpu: '', label: '', tool: '', from: '', to: '' };
type FilterKey = keyof typeof filters;

const has = (value: string, needle: string): boolean => needle === '' || value.toLowerCase().includes(needle.toLowerCase());

/** The same filters as `inferbench ls` (substring, any case), plus the tool and a date range. */
export function matches(r: RunRow): boolean {
  const day = r.createdAt.slice(0, 10);
  return (
    has(r.model, filters.model) &&
    has(r.engine, filters.engine) &&
    has(r.gpu, filters.gpu) &&
    has(r.label, filters.label) &&
    (filters.tool === '' || r.tool === filters.tool) &&
    (filters.from === '' || (day !== '' && day >= filters.from)) &&
    (filters.to === '' || (day !== '' && day <= filters.to))
  );
}

export function runsPage(root: HTMLElement): () => void {
  let rows: RunRow[] = [];
  let folder = '';
  const list = h('div', { id: 'runs-list' });
  const summary = h('p', { class: 'note', id: 'runs-count' });
  const toolSelect = h('select', { data: { filter: 'tool' }, on: { change: () => setFilter('tool', toolSelect.value) } });
  const compareBtn = h('button', { id: 'compare-ticked', on: { click: () => void (location.hash = `#/compare?ids=${ticked().join(',')}`) } });
  const clearBtn = h('button', { on: { click: () => { clearTicked(); render(); } } }, 'Clear ticks');

  function setFilter(key: FilterKey, value: string): void {
    filters[key] = value;
    render();
  }
  const input = (key: FilterKey, label: string, type = 'text'): HTMLLabelElement =>
    h('label', null, label, h('input', { type, value: filters[key], placeholder: type === 'text' ? 'contains…' : '', data: { filter: key }, on: { input: (e) => setFilter(key, (e.target as HTMLInputElement).value) } }));

  fill(
    root,
    h('h1', null, 'Runs'),
    h('div', { class: 'filters' }, input('model', 'Model'), input('engine', 'Engine'), input('gpu', 'GPU'), input('label', 'Label'), h('label', null, 'Tool', toolSelect), input('from', 'Created from', 'date'), input('to', 'to', 'date'), compareBtn, clearBtn),
    summary,
    list,
  );

  function render(): void {
    const tick = ticked();
    const tools = [...new Set(rows.map((r) => r.tool))].sort();
    fill(toolSelect, h('option', { value: '' }, 'any'), tools.map((t) => h('option', { value: t }, t)));
    toolSelect.value = tools.includes(filters.tool) ? filters.tool : '';
    compareBtn.textContent = `Compare ticked (${tick.length})`;
    compareBtn.disabled = tick.length < 2;
    const shown = rows.filter(matches);
    summary.textContent = rows.length === 0 ? `No runs in ${folder} yet: start one with \`inferbench run\` (it shows here live).` : `${shown.length} of ${rows.length} runs in ${folder}. Tick two or more to compare them (the first ticked is the baseline).`;
    const body = shown.map((r) => [
      r.error ? '' : h('input', { type: 'checkbox', checked: tick.includes(r.id), data: { tick: r.id }, on: { change: (e) => { setTicked(r.id, (e.target as HTMLInputElement).checked); render(); } } }),
      h('span', null, h('a', { href: `#/run/${r.id}` }, r.id), r.live ? badge(r.live) : null),
      r.createdAt,
      r.profile,
      r.model,
      r.engine,
      r.gpu,
      r.quant,
      r.error ? 'unreadable' : r.rowsText,
      `${r.label}${r.predicted ? `${r.label ? ' ' : ''}(predicted)` : ''}`,
      r.tool,
      r.error ? h('span', { class: 'warn', title: r.error }, r.name) : r.name,
    ]);
    fill(list, body.length ? table(['', 'ID', 'Created (UTC)', 'Profile', 'Model', 'Engine', 'GPU', 'Quant', 'Rows', 'Label', 'Tool', 'Folder'], body, 'runs') : h('p', { class: 'empty' }, rows.length ? 'No run matches the filters.' : ''));
  }

  async function load(): Promise<void> {
    const data = await getJson<{ results: string; runs: RunRow[] }>('/api/runs');
    rows = data.runs;
    folder = data.results;
    render();
  }
  const reload = throttle(() => void load().catch((e: Error) => (summary.textContent = `cannot list runs: ${e.message}`)), 500);
  reload();
  const known = new Map<string, string>();
  const offLive = onLive((m) => {
    // A new run, a finished row or a changed status changes the list; progress alone does not.
    const key = `${m.run.status}:${m.run.stagesDone}`;
    if (known.get(m.run.name) !== key) {
      known.set(m.run.name, key);
      reload();
    }
  });
  const offRuns = onRuns(reload);
  return () => {
    offLive();
    offRuns();
  };
}
