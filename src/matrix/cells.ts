/**
 * The cells of a matrix: every `--server-cmd` times every combination of the `--vary` values, or the list in a
 * `--cells` file (YAML or JSON) for sets that are not a product, plus `--server-url` servers already running.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../config/parse.js';
import { configError } from '../core/errors.js';
import { fillPlaceholders } from '../launch/placeholders.js';
import type { CellSpec } from './types.js';

export interface CellFlags {
  serverCmd?: string[];
  vary?: string[];
  cells?: string;
  serverUrl?: string[];
  stopCmd?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.=-]*$/;

/** `NAME=CMD` (NAME a plain word) or a plain command, named `server`. */
function splitNamed(flag: string, raw: string, plainName: string | undefined): [string, string] {
  const m = /^([A-Za-z0-9][A-Za-z0-9_.-]*)=(.*)$/s.exec(raw);
  if (m && !/\s/.test(m[1] as string)) return [m[1] as string, (m[2] as string).trim()];
  if (plainName === undefined) throw configError(`${flag} ${JSON.stringify(raw)}: expected NAME=VALUE`, `e.g. ${flag} vllm=http://127.0.0.1:8000`);
  return [plainName, raw.trim()];
}

/** `--vary KEY=V1,V2`: the keys in order, each with its values. */
export function parseVary(vary: readonly string[]): [string, string[]][] {
  const out: [string, string[]][] = [];
  for (const raw of vary) {
    const m = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$/s.exec(raw);
    const values = m ? (m[2] as string).split(',').map((v) => v.trim()) : [];
    if (!m || values.some((v) => v === '')) throw configError(`--vary ${JSON.stringify(raw)}: expected KEY=V1,V2,…`, 'e.g. --vary tp=1,2 --vary max-num-seqs=64,256');
    const key = m[1] as string;
    if (key === 'port' || key === 'name') throw configError(`--vary ${key}: {${key}} is set per cell by the matrix`, 'pick another name');
    if (out.some(([k]) => k === key)) throw configError(`--vary ${key} is given twice`, 'give each key once, its values comma-separated');
    out.push([key, [...new Set(values)]]);
  }
  return out;
}

/** Every combination of the values, in the order given (the last key varies fastest). */
export function product(keys: readonly [string, string[]][]): Record<string, string>[] {
  let combos: Record<string, string>[] = [{}];
  for (const [key, values] of keys) combos = combos.flatMap((c) => values.map((v) => ({ ...c, [key]: v })));
  return combos;
}

/** `vllm_tp=2_quant=awq`: the server, then each value; characters a folder name should not hold become `-`. */
export function cellName(server: string, params: Record<string, string>): string {
  const parts = [server, ...Object.entries(params).map(([k, v]) => `${k}=${v}`)];
  return parts.join('_').replace(/[^A-Za-z0-9_.=-]/g, '-');
}

export function buildCells(flags: CellFlags): CellSpec[] {
  const fromFile = flags.cells !== undefined ? readCellsFile(flags.cells, flags.stopCmd) : [];
  if (flags.cells !== undefined && (flags.serverCmd?.length || flags.vary?.length)) {
    throw configError('--cells lists the cells itself: leave out --server-cmd and --vary', 'put every server and its values in the file');
  }
  const cmds = flags.serverCmd ?? [];
  const named = cmds.map((raw) => splitNamed('--server-cmd', raw, cmds.length === 1 ? 'server' : undefined));
  const keys = parseVary(flags.vary ?? []);
  if (keys.length > 0 && named.length === 0 && !(flags.serverUrl?.length)) throw configError('--vary needs a server to vary: add --server-cmd CMD', 'e.g. --server-cmd "vllm serve MODEL --port {port} --max-num-seqs {seqs}" --vary seqs=64,256');
  const cells: CellSpec[] = [...fromFile];
  for (const [server, command] of named) {
    if (command === '') throw configError(`--server-cmd ${server}= has no command`);
    for (const params of product(keys)) {
      cells.push({ name: cellName(server, params), server, params, command, ...(flags.stopCmd !== undefined ? { stopCommand: flags.stopCmd } : {}) });
    }
  }
  for (const raw of flags.serverUrl ?? []) {
    const [server, url] = splitNamed('--server-url', raw, undefined);
    cells.push({ name: cellName(server, {}), server, params: {}, url });
  }
  if (cells.length === 0) throw configError('a matrix needs cells: give --server-cmd CMD (and --vary KEY=V1,V2), --cells FILE or --server-url NAME=URL', 'see inferbench matrix --help');
  checkCells(cells);
  return cells;
}

/** Names unique and folder-safe; every placeholder of a command known (checked now, not at the 7th cell). */
export function checkCells(cells: readonly CellSpec[]): void {
  const seen = new Set<string>();
  for (const c of cells) {
    if (!NAME.test(c.name)) throw configError(`cell name ${JSON.stringify(c.name)}: use letters, digits, '.', '_', '=' and '-' only`, 'it names the cell\'s folder');
    if (seen.has(c.name)) throw configError(`two cells are named ${c.name}`, 'give the servers different names (NAME=CMD) or the cells different values');
    seen.add(c.name);
    if (c.url !== undefined) {
      if (!/^https?:\/\//.test(c.url)) throw configError(`--server-url ${c.name}=${c.url}: expected an http:// or https:// URL`);
      continue;
    }
    const values = { ...c.params, port: 0, name: c.name };
    fillPlaceholders(c.command ?? '', values);
    if (c.stopCommand !== undefined) fillPlaceholders(c.stopCommand, values);
  }
}

const CELL_KEYS = new Set(['name', 'server', 'command', 'stop', 'stopCommand', 'url', 'params', 'readyTimeout']);

/**
 * A cells file: a list of cells, or `{ servers: {NAME: CMD}, cells: [...] }`. A cell names its `server` (a key of
 * `servers`) or gives its own `command` (or `url`); its values are `params: {…}` or its other keys
 * (`- {server: vllm, tp: 2}`).
 */
export function readCellsFile(path: string, stopCmd: string | undefined): CellSpec[] {
  let doc: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    doc = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw configError(`--cells ${path}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, 'give a YAML or JSON file with a list of cells');
  }
  const obj = isObj(doc) ? doc : {};
  const servers = isObj(obj['servers']) ? obj['servers'] : {};
  const list = Array.isArray(doc) ? doc : obj['cells'];
  if (!Array.isArray(list) || list.length === 0) throw configError(`--cells ${path}: no cells`, 'write a list of cells, e.g. - {server: vllm, tp: 1}, or {servers: {...}, cells: [...]}');
  return list.map((raw, i) => {
    const where = `--cells ${path}: cell ${i + 1}`;
    if (!isObj(raw)) throw configError(`${where} is not a mapping`, 'e.g. - {server: vllm, tp: 1}');
    const params: Record<string, string> = {};
    const given = isObj(raw['params']) ? raw['params'] : Object.fromEntries(Object.entries(raw).filter(([k]) => !CELL_KEYS.has(k)));
    for (const [k, v] of Object.entries(given)) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw configError(`${where}: value ${k} is not a string or a number`);
      params[k] = String(v);
    }
    const server = typeof raw['server'] === 'string' ? raw['server'] : typeof raw['name'] === 'string' ? raw['name'] : 'server';
    const command = typeof raw['command'] === 'string' ? raw['command'] : typeof servers[server] === 'string' ? (servers[server] as string) : undefined;
    const url = typeof raw['url'] === 'string' ? raw['url'] : undefined;
    if (command === undefined && url === undefined) throw configError(`${where}: no command for server ${JSON.stringify(server)}`, 'give the cell a command, or list the server under servers:');
    const stop = typeof raw['stopCommand'] === 'string' ? raw['stopCommand'] : typeof raw['stop'] === 'string' ? raw['stop'] : stopCmd;
    const name = typeof raw['name'] === 'string' ? raw['name'] : cellName(server, params);
    const p: string[] = [];
    const ready = raw['readyTimeout'] === undefined ? undefined : parseDuration(`${where}: readyTimeout`, String(raw['readyTimeout']), p, { positive: true });
    if (p.length) throw configError(p.join('; '));
    return { name, server, params, ...(ready !== undefined ? { readyTimeoutSeconds: ready } : {}), ...(url !== undefined ? { url } : { command: command as string }), ...(stop !== undefined && url === undefined ? { stopCommand: stop } : {}) };
  });
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
