/** Text for HTML element content and quoted attribute values. Everything a server or user wrote goes through here. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** JSON placed inside a <script> element: no "</script>", no "<!--", no line separators that end a JS string. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** A markdown heading line from layouts.ts as plain text ("- **Qwen**, **8**×**L20**" → "Qwen, 8×L20"). */
export function plainHeading(markdown: string): string {
  return markdown
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.replace(/^\s*(?:-|#+)\s*/, '').replace(/\*\*/g, ''))
    .join(' — ');
}
