/** A plain table: header cells and rows of already formatted cells. */
export interface Table {
  headers: string[];
  rows: string[][];
}

const width = (s: string): number => {
  // CJK characters take two terminal columns.
  let w = 0;
  for (const ch of s) w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return w;
};

function center(s: string, w: number): string {
  const pad = w - width(s);
  const left = Math.floor(pad / 2);
  return ' '.repeat(left) + s + ' '.repeat(pad - left);
}

/** Markdown with centred columns padded to equal width, the layout of the seed tables. */
export function renderMarkdown(t: Table): string {
  const widths = t.headers.map((h, c) => Math.max(width(h), 3, ...t.rows.map((r) => width(r[c] ?? ''))));
  const line = (cells: string[]): string => `| ${cells.map((cell, c) => center(cell, widths[c] ?? 3)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => `:${'-'.repeat(Math.max(1, w - 2))}:`).join(' | ')} |`;
  return [line(t.headers), rule, ...t.rows.map(line)].join('\n');
}

/** CSV per RFC 4180 (quotes only where needed). */
export function renderCsv(t: Table): string {
  const esc = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [t.headers, ...t.rows].map((r) => r.map(esc).join(',')).join('\n') + '\n';
}
