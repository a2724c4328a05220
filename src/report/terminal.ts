import type { Table } from './table.js';

/** How text is emphasised on one output stream. */
export interface TerminalStyle {
  bold(text: string): string;
}

/**
 * ANSI bold only where a person reads it: the stream is a TTY and NO_COLOR (https://no-color.org) is unset or
 * empty. Pipes, files and CI logs get plain text.
 */
export function terminalStyle(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): TerminalStyle {
  const ansi = stream.isTTY === true && !env['NO_COLOR'];
  return { bold: ansi ? (t) => `\u001b[1m${t}\u001b[22m` : (t) => t };
}

export const PLAIN: TerminalStyle = { bold: (t) => t };

/** Markdown emphasis and escapes turned into terminal text: `**x**` → bold x, `\*` → `*`. */
export function fromMarkdown(text: string, style: TerminalStyle): string {
  return text.replace(/\*\*(.+?)\*\*/g, (_, inner: string) => style.bold(inner)).replace(/\\\*/g, '*');
}

const width = (s: string): number => {
  // CJK characters take two terminal columns.
  let w = 0;
  for (const ch of s) w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return w;
};

/**
 * A pipe table for the terminal: the first `labelColumns` columns left-aligned, figures right-aligned so their
 * decimal points line up, a plain rule under the header. It stays valid Markdown when pasted.
 */
export function renderTerminalTable(t: Table, labelColumns = 1): string {
  const widths = t.headers.map((h, c) => Math.max(width(h), 3, ...t.rows.map((r) => width(r[c] ?? ''))));
  const pad = (cell: string, c: number): string => {
    const room = ' '.repeat(Math.max(0, (widths[c] ?? 3) - width(cell)));
    return c < labelColumns ? cell + room : room + cell;
  };
  const line = (cells: readonly string[]): string => `| ${cells.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (c < labelColumns ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(t.headers), rule, ...t.rows.map(line)].join('\n');
}
