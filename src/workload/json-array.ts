/** Elements of a top-level JSON array with the line each starts on, so errors can name file:line. */
export interface JsonArrayScan {
  elements: Array<{ line: number; text: string }>;
  error?: { line: number; message: string };
}

export function scanJsonArray(text: string): JsonArrayScan {
  const elements: JsonArrayScan['elements'] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  const skipSpace = () => {
    while (i < n && /\s/.test(text[i] as string)) if (text[i++] === '\n') line++;
  };
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  skipSpace();
  if (text[i] !== '[') return { elements, error: { line, message: 'expected a JSON array' } };
  i++;
  skipSpace();
  if (text[i] === ']') return { elements };
  while (i < n) {
    skipSpace();
    const start = i;
    const startLine = line;
    let depth = 0;
    let inString = false;
    for (; i < n; i++) {
      const c = text[i];
      if (c === '\n') line++;
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '[' || c === '{') depth++;
      else if (c === ']' || c === '}') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) break;
    }
    elements.push({ line: startLine, text: text.slice(start, i) });
    if (i >= n) return { elements, error: { line, message: 'the array is not closed' } };
    if (text[i++] === ']') {
      skipSpace();
      if (i < n) return { elements, error: { line, message: 'text after the closing ]' } };
      return { elements };
    }
  }
  return { elements, error: { line, message: 'the array is not closed' } };
}
