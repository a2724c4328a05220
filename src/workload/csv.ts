/** One CSV record with the line it starts on (quoted fields may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export interface CsvResult {
  records: CsvRecord[];
  /** Structural problems (unterminated quote, text after a closing quote), by line. */
  errors: Array<{ line: number; message: string }>;
}

/** RFC 4180: comma-separated, `"` quotes, `""` escapes, CRLF or LF; blank lines skipped; a UTF-8 BOM ignored. */
export function parseCsv(input: string): CsvResult {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const records: CsvRecord[] = [];
  const errors: CsvResult['errors'] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let bad: string | undefined;
    for (;;) {
      if (text[i] === '"') {
        i++;
        let closed = false;
        while (i < n) {
          const c = text[i] as string;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (!closed) bad ??= 'unterminated quoted field';
        while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') {
          bad ??= 'text after a closing quote';
          i++;
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') field += text[i++];
      }
      fields.push(field);
      field = '';
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') {
      i++;
      line++;
    }
    if (bad) errors.push({ line: start, message: bad });
    else if (!(fields.length === 1 && fields[0] === '')) records.push({ line: start, fields });
  }
  return { records, errors };
}
