import { extname } from 'node:path';
import type { ChatMessage } from '../dialects/types.js';
import { parseCsv } from './csv.js';
import { scanJsonArray } from './json-array.js';
import { numberedLines, Problems, readInput } from './problems.js';

export type DatasetFormat = 'jsonl' | 'json' | 'csv';

export interface DatasetOptions {
  /** Default: from the extension (.csv, .jsonl/.ndjson), else by content ('[' ⇒ JSON array). */
  format?: DatasetFormat;
  /** CSV: the column holding the prompt (default `prompt`). */
  column?: string;
  /** CSV: the column holding the output length (default `output_tokens`, then `max_tokens`, when present). */
  outputColumn?: string;
}

export interface DatasetEntry {
  /** 1-based line where the entry starts. */
  line: number;
  /** Prompt text (for `messages` entries: the last user message). */
  prompt: string;
  messages?: ChatMessage[];
  /** Output length the file asks for (`output_tokens`/`max_tokens`). */
  outputTokens?: number;
  /** ShareGPT: the assistant reply that followed the prompt, whose token length is the default output length. */
  reference?: string;
}

export interface Dataset {
  path: string;
  format: DatasetFormat | 'sharegpt';
  entries: DatasetEntry[];
  /** ShareGPT conversations without a human turn followed by an assistant turn (as other tools drop them). */
  skipped: number;
}

const HINT = 'fix or remove these entries; accepted: JSONL {"prompt"} or {"messages"} (+ "output_tokens"), ShareGPT JSON, CSV with a header row';
const ROLES = new Set(['system', 'user', 'assistant']);
const HUMAN = new Set(['human', 'user']);
const GPT = new Set(['gpt', 'assistant', 'chatgpt', 'bard', 'model']);

/**
 * Reads JSONL (`prompt` or `messages`, optional `output_tokens`/`max_tokens`), ShareGPT JSON (`conversations`
 * of `{from, value}`: the first human turn is the prompt, the next gpt turn the reference output) or CSV with
 * named columns. Every unusable entry is collected and reported at once as `file:line: what is wrong`.
 */
export async function loadDataset(path: string, opts: DatasetOptions = {}): Promise<Dataset> {
  const text = await readInput(path, 'data file');
  const problems = new Problems(path);
  const format = opts.format ?? guessFormat(path, text);
  const entries: DatasetEntry[] = [];
  let skipped = 0;
  let sharegpt = false;
  const take = (line: number, value: unknown) => {
    const r = interpret(value);
    if (r === 'skip') skipped++;
    else if (typeof r === 'string') problems.add(line, r);
    else {
      if (r.reference !== undefined) sharegpt = true;
      entries.push({ ...r, line });
    }
  };
  if (format === 'csv') {
    readCsv(text, opts, problems, entries);
  } else if (format === 'jsonl') {
    for (const { line, text: t } of numberedLines(text)) {
      const v = parseJson(t);
      if (v === undefined) problems.add(line, 'not valid JSON');
      else take(line, v);
    }
  } else {
    const scan = scanJsonArray(text);
    for (const el of scan.elements) {
      const v = parseJson(el.text);
      if (v === undefined) problems.add(el.line, 'not valid JSON');
      else take(el.line, v);
    }
    if (scan.error) problems.add(scan.error.line, scan.error.message);
  }
  problems.throwIfAny(HINT);
  if (entries.length === 0) problems.add(1, 'no usable entry');
  problems.throwIfAny(HINT);
  return { path, format: sharegpt ? 'sharegpt' : format, entries, skipped };
}

function guessFormat(path: string, text: string): DatasetFormat {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  return text.trimStart().replace(/^\uFEFF/, '').startsWith('[') ? 'json' : 'jsonl';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

type Interpreted = Omit<DatasetEntry, 'line'> | 'skip' | string;

function interpret(value: unknown): Interpreted {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'expected a JSON object';
  const o = value as Record<string, unknown>;
  const out = outputTokensOf(o);
  if (typeof out === 'string') return out;
  const withOut = <T extends object>(e: T) => (out === undefined ? e : { ...e, outputTokens: out });
  if ('prompt' in o) {
    if (typeof o['prompt'] !== 'string' || o['prompt'].trim() === '') return '"prompt" must be a non-empty string';
    return withOut({ prompt: o['prompt'] });
  }
  if ('messages' in o) {
    const msgs = o['messages'];
    if (!Array.isArray(msgs) || msgs.length === 0) return '"messages" must be a non-empty array';
    const messages: ChatMessage[] = [];
    for (const [i, m] of msgs.entries()) {
      const mm = m as Record<string, unknown> | null;
      if (!mm || typeof mm !== 'object' || !ROLES.has(mm['role'] as string) || typeof mm['content'] !== 'string') {
        return `messages[${i}] needs a role (system, user, assistant) and string content`;
      }
      messages.push({ role: mm['role'] as ChatMessage['role'], content: mm['content'] });
    }
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    if (!lastUser) return '"messages" has no user message';
    return withOut({ prompt: lastUser.content, messages });
  }
  if ('conversations' in o) {
    const conv = o['conversations'];
    if (!Array.isArray(conv)) return '"conversations" must be an array';
    const turns: Array<{ from: string; value: string }> = [];
    for (const [i, t] of conv.entries()) {
      const tt = t as Record<string, unknown> | null;
      if (!tt || typeof tt !== 'object' || typeof tt['from'] !== 'string' || typeof tt['value'] !== 'string') {
        return `conversations[${i}] needs string "from" and "value"`;
      }
      turns.push({ from: tt['from'].toLowerCase(), value: tt['value'] });
    }
    const h = turns.findIndex((t) => HUMAN.has(t.from) && t.value.trim() !== '');
    const reply = h < 0 ? undefined : turns[h + 1];
    if (!reply || !GPT.has(reply.from)) return 'skip';
    return withOut({ prompt: (turns[h] as { value: string }).value, reference: reply.value });
  }
  return 'needs "prompt", "messages" or "conversations"';
}

function outputTokensOf(o: Record<string, unknown>): number | undefined | string {
  for (const key of ['output_tokens', 'max_tokens']) {
    if (!(key in o) || o[key] === null) continue;
    const v = o[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return `"${key}" must be a whole number ≥ 1`;
    return v;
  }
  return undefined;
}

function readCsv(text: string, opts: DatasetOptions, problems: Problems, entries: DatasetEntry[]): void {
  const { records, errors } = parseCsv(text);
  for (const e of errors) problems.add(e.line, e.message);
  const [header, ...rows] = records;
  if (!header) return problems.add(1, 'empty CSV');
  const names = header.fields.map((f) => f.trim());
  const column = opts.column ?? 'prompt';
  const pi = names.indexOf(column);
  if (pi < 0) return problems.add(header.line, `no column "${column}" (columns: ${names.join(', ')}); choose one with --data-column`);
  const outName = opts.outputColumn ?? ['output_tokens', 'max_tokens'].find((c) => names.includes(c));
  const oi = outName === undefined ? -1 : names.indexOf(outName);
  if (opts.outputColumn !== undefined && oi < 0) return problems.add(header.line, `no column "${opts.outputColumn}"`);
  for (const r of rows) {
    if (r.fields.length !== names.length) {
      problems.add(r.line, `${r.fields.length} fields, the header has ${names.length}`);
      continue;
    }
    const prompt = r.fields[pi] as string;
    if (prompt.trim() === '') {
      problems.add(r.line, `empty "${column}"`);
      continue;
    }
    const raw = oi < 0 ? '' : (r.fields[oi] as string).trim();
    if (raw === '') {
      entries.push({ line: r.line, prompt });
      continue;
    }
    const out = Number(raw);
    if (!Number.isInteger(out) || out < 1) problems.add(r.line, `"${outName}" must be a whole number ≥ 1, got ${JSON.stringify(raw)}`);
    else entries.push({ line: r.line, prompt, outputTokens: out });
  }
}
