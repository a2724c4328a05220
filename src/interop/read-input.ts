import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { configError } from '../core/errors.js';
import type { FileInput, SourceInput } from './types.js';

/**
 * Python's json module writes inf and nan as the bare tokens Infinity, -Infinity and NaN (SGLang's request_rate
 * defaults to inf), which JSON.parse rejects. Outside strings they become 1e999 / -1e999 (parsed as ±Infinity)
 * and null.
 */
export function pythonJsonText(text: string): string {
  if (!/Infinity|NaN/.test(text)) return text;
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (text.startsWith('-Infinity', i)) {
      out += '-1e999';
      i += 8;
    } else if (text.startsWith('Infinity', i)) {
      out += '1e999';
      i += 7;
    } else if (text.startsWith('NaN', i)) {
      out += 'null';
      i += 2;
    } else out += c;
  }
  return out;
}

const firstLine = (msg: string): string => msg.split('\n')[0] ?? msg;

/** One JSON document, or JSONL (one document a line: SGLang, vLLM --append-result, AIPerf per-record files). */
function parseText(path: string, raw: string): FileInput {
  const text = pythonJsonText(raw.replace(/^\uFEFF/, ''));
  if (text.trim() === '') throw configError(`${path} is empty`, 'pass the result file the tool wrote (see docs/import.md)');
  let wholeError: string;
  try {
    return { kind: 'json', path, value: JSON.parse(text) as unknown };
  } catch (err) {
    wholeError = firstLine((err as Error).message);
  }
  const lines = text.split('\n').map((l) => l.trim());
  const values: unknown[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') continue;
    try {
      values.push(JSON.parse(line) as unknown);
    } catch (err) {
      // A file that is neither one document nor a document a line: say where it broke.
      const truncated = /end of JSON input|Unterminated/i.test(wholeError) || i === lines.length - 1 || lines.slice(i + 1).every((l) => l === '');
      if (values.length === 0 || (i === 0 && lines.length === 1)) {
        throw configError(
          `${path} is not valid JSON (${wholeError})`,
          truncated ? 'the file looks truncated: export it again from the tool' : 'pass the result file the tool wrote, unchanged (see docs/import.md)',
        );
      }
      throw configError(
        `${path}: line ${i + 1} is not valid JSON (${firstLine((err as Error).message)})`,
        truncated ? 'the last line looks truncated: remove it or export the file again' : 'each line of a JSONL result file must be one JSON object',
      );
    }
  }
  if (values.length === 1) return { kind: 'json', path, value: values[0] };
  return { kind: 'jsonl', path, values };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code;
    throw configError(`cannot read ${path}: ${why}`, 'pass the path of a result file written by GuideLLM, vLLM bench serve, SGLang bench_serving, AIPerf or genai-bench');
  }
}

/**
 * Reads an input: a file (JSON or JSONL), or a folder (a genai-bench experiment folder, an AIPerf artifact
 * folder), whose JSON and JSONL files directly inside it are parsed; files that are not JSON are skipped there.
 */
export function readSourceInput(path: string): SourceInput {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw configError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')}`, 'check the path');
  }
  if (!isDir) return parseText(path, readText(path));
  const files: FileInput[] = [];
  for (const name of readdirSync(path).sort()) {
    if (!/\.jsonl?$/.test(name)) continue;
    const full = join(path, name);
    if (!statSync(full).isFile()) continue;
    files.push(parseText(full, readText(full)));
  }
  if (files.length === 0) throw configError(`${path} is a folder with no JSON result file in it`, 'pass a result file, a genai-bench experiment folder or an AIPerf artifact folder');
  return { kind: 'dir', path, files };
}
