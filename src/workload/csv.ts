import { parse } from 'csv-parse/sync';

/** One CSV record with the line it starts on (quoted fields may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export interface CsvResult {
  records: CsvRecord[];
  /** Structural problems (unterminated quote, text after a closing quote), by the line the record starts on. */
  errors: Array<{ line: number; message: string }>;
}

/** csv-parse's error codes in the words the rest of the file:line messages use. */
const MESSAGES: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'unterminated quoted field',
  CSV_INVALID_CLOSING_QUOTE: 'text after a closing quote',
};

/**
 * RFC 4180 (csv-parse): comma-separated, `"` quotes, `""` escapes, CRLF or LF; blank lines skipped; a UTF-8 BOM
 * ignored; rows may have any number of fields (callers check that against the header, with the line). A record
 * csv-parse cannot read is skipped and reported with the line it starts on; the others are still read.
 */
export function parseCsv(input: string): CsvResult {
  const records: CsvRecord[] = [];
  const errors: CsvResult['errors'] = [];
  // csv-parse reports how many bytes it has read at the end of each record; the record began after the previous
  // one (and any blank lines). Its own line count is not used: it counts a CRLF inside a quoted field twice.
  const bytes = Buffer.from(input, 'utf8');
  const lines = new LineIndex(bytes);
  let readTo = 0;
  const startOf = (endBytes: number | undefined): number => {
    let at = readTo;
    while (bytes[at] === 0x0a || bytes[at] === 0x0d) at++;
    readTo = endBytes ?? readTo;
    return lines.lineAt(at);
  };
  // Both callbacks run in file order while csv-parse reads.
  parse(bytes, {
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (record: string[], context) => {
      records.push({ line: startOf(context.bytes), fields: record });
      return null; // kept in `records`, with its line
    },
    on_skip: (err) => {
      if (!err) return undefined;
      const at = err as unknown as { code?: string; bytes?: number };
      errors.push({ line: startOf(at.bytes), message: MESSAGES[at.code ?? ''] ?? err.message });
      return undefined;
    },
  });
  return { records, errors };
}

/**
 * 1-based line of a byte offset. Lines end in LF, CRLF or a lone CR (old Mac files, which csv-parse also reads);
 * neither byte occurs inside a multi-byte UTF-8 character.
 */
class LineIndex {
  private readonly starts: number[] = [0];
  constructor(bytes: Buffer) {
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x0a || (bytes[i] === 0x0d && bytes[i + 1] !== 0x0a)) this.starts.push(i + 1);
    }
  }
  lineAt(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}
