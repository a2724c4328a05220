import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/workload/csv.js';

describe('CSV datasets and traces through csv-parse, keeping file:line (issue 17, item 11)', () => {
  const lines = (text: string): Array<[number, string[]]> => parseCsv(text).records.map((r) => [r.line, r.fields]);

  it('numbers records by the line they start on, across quoted line breaks, blank lines and a BOM', () => {
    expect(lines('\ufeffid,prompt\r\n1,"two\r\nlines"\r\n\r\n2,"say ""hi"""\r\n3,plain')).toEqual([
      [1, ['id', 'prompt']],
      [2, ['1', 'two\r\nlines']],
      [5, ['2', 'say "hi"']],
      [6, ['3', 'plain']],
    ]);
  });

  it('reads files whose lines end in a lone CR, with their line numbers', () => {
    expect(lines('id,prompt\r1,a\r2,"b\rc"\r3,d\r')).toEqual([
      [1, ['id', 'prompt']],
      [2, ['1', 'a']],
      [3, ['2', 'b\rc']],
      [5, ['3', 'd']],
    ]);
  });

  it('keeps a stray quote inside an unquoted field, and reports an unterminated quote at the line its record starts', () => {
    expect(lines('a,b\nhe said "hi",1\n')).toEqual([[1, ['a', 'b']], [2, ['he said "hi"', '1']]]);
    const bad = parseCsv('a,b\n1,2\n3,"open\n4,5\n');
    expect(bad.records.map((r) => r.line)).toEqual([1, 2]);
    expect(bad.errors).toEqual([{ line: 3, message: 'unterminated quoted field' }]);
  });

  it('UTF-8 text before a record does not shift its line', () => {
    expect(lines('prompt\n"Grüße, 世界\nzwei"\nnext')).toEqual([[1, ['prompt']], [2, ['Grüße, 世界\nzwei']], [4, ['next']]]);
  });
});
