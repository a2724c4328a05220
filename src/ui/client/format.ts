import type { TableJson } from './api-types.js';
import { h, table } from './dom.js';

export const seedTable = (t: TableJson): HTMLDivElement => table(t.headers, t.rows);

export function bullets(lines: readonly string[], cls = 'notes'): HTMLUListElement | null {
  return lines.length ? h('ul', { class: cls }, lines.map((l) => h('li', null, l))) : null;
}

export function errorBox(message: string, hint?: string): HTMLDivElement {
  return h('div', { class: 'live-panel' }, h('p', { class: 'warn' }, message), hint ? h('p', { class: 'note' }, hint) : null);
}

export const fixed = (n: number, d = 1): string => (Number.isFinite(n) ? n.toFixed(d) : '—');
