/**
 * Error text fit for one line. Servers answer with whole HTML pages (a file server, a proxy's 502 page),
 * multi-line tracebacks or long JSON; requests.jsonl keeps the message as recorded, tables and one-line
 * notes show this short form.
 */

/** How long a table cell's error text may be. */
export const SHORT_ERROR_CHARS = 100;

const HTML_HINT = /<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>]|<\/(?:html|head|body|title|h1|h2|p|div|pre|center)\s*>/i;

/** True when the text carries HTML markup (a page, or a message with a page inside). */
export function looksLikeHtml(text: string): boolean {
  return HTML_HINT.test(text);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
    const lower = name.toLowerCase();
    if (lower.startsWith('#x')) return safeChar(Number.parseInt(lower.slice(2), 16), whole);
    if (lower.startsWith('#') && lower !== '#39') return safeChar(Number.parseInt(lower.slice(1), 10), whole);
    return ENTITIES[lower] ?? whole;
  });
}

function safeChar(code: number, fallback: string): string {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback;
}

/**
 * The visible text of HTML, on one line: the page title first ("Title — body text"), scripts, styles
 * and tags removed, entities decoded, whitespace collapsed. Text around the markup is kept in place.
 */
export function htmlText(html: string): string {
  let title = '';
  const END_OF_TITLE = '\u0001';
  const stripped = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<title\b[^>]*>([\s\S]*?)<\/title\s*>/i, (_m, t: string) => {
      title = collapse(decodeEntities(t.replace(/<[^>]*>/g, ' ')));
      return title === '' ? ' ' : ` ${title} ${END_OF_TITLE} `;
    })
    .replace(/<[^>]*>/g, ' ');
  let text = collapse(decodeEntities(stripped));
  if (title !== '') {
    // Pages repeat their title as the first heading: "Error response — Error response Error code: 501".
    text = text.replace(`${END_OF_TITLE} ${title}`, END_OF_TITLE);
    text = collapse(text.replace(new RegExp(`\\s*${END_OF_TITLE}\\s*$`), '').replace(new RegExp(`\\s*${END_OF_TITLE}\\s*`), ' — '));
  }
  return text;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cut to `max` characters on one line, with "…" when something was left out. */
export function clip(text: string, max: number): string {
  const s = collapse(text);
  if (s.length <= max) return s;
  // Do not split a surrogate pair: the cut must stay valid UTF-16.
  let cut = max - 1;
  const code = s.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return `${s.slice(0, cut).trimEnd()}…`;
}

/**
 * One short line for a table cell: markup reduced to its visible text, else the first non-empty line;
 * whitespace collapsed; at most `max` characters, ending in "…" when cut.
 */
export function shortError(message: string, max = SHORT_ERROR_CHARS): string {
  const text = looksLikeHtml(message) ? htmlText(message) : (message.split(/\r?\n/).find((l) => l.trim() !== '') ?? '');
  return clip(text, max);
}

/** What the start of a reply that is not the expected format looks like: a web page by its title, else its first 80 characters. */
export function describeBodyStart(head: string): string {
  if (looksLikeHtml(head)) return `it is an HTML page (${JSON.stringify(clip(htmlText(head), 80))})`;
  return `it starts with ${JSON.stringify(head.trim().replace(/\s+/g, ' ').slice(0, 80))}`;
}
