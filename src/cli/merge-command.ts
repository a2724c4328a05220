import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configError } from '../core/errors.js';
import type { RunOptions } from '../config/run-options.js';
import { mergeShards, readShardFolder } from '../distributed/merge.js';
import { healthLine } from '../metrics/health.js';
import { renderCsvReport, renderMarkdownReport, renderTerminalReport } from '../report/run-summary.js';
import { terminalStyle } from '../report/terminal.js';
import { writeRunFolder } from '../store/run-folder.js';
import { toolVersion } from './version.js';
import { shortWindowRules } from './window-rules.js';

interface MergeFlags {
  out?: string;
  json?: boolean;
}

/** `inferbench merge DIR... --out DIR [--json]`: the shards of one run → one run folder. */
export async function mergeCommand(dirs: string[], flags: MergeFlags, io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }): Promise<number> {
  if (!flags.out) throw configError('merge needs --out DIR for the merged run', 'e.g. inferbench merge shard-0 shard-1 shard-2 --out merged');
  if (dirs.length === 0) throw configError('merge needs the shard folders', 'e.g. inferbench merge shard-0 shard-1 shard-2 --out merged');
  const outDir = resolve(flags.out);
  if (existsSync(outDir) && readdirSync(outDir).length > 0) throw configError(`--out ${flags.out} is not empty`, 'give a new folder for the merged run');
  const folders = await Promise.all(dirs.map(readShardFolder));
  const { doc, records } = mergeShards(folders, outDir);
  const human = flags.json ? io.stderr : io.stdout;
  const say = (line: string): void => void human.write(`${line}\n`);

  const base = folders.find((f) => f.shard.index === 0) ?? folders[0];
  const { shard: _shard, ...manifest } = (base?.manifest ?? {}) as Record<string, unknown>;
  writeRunFolder(outDir, {
    manifest: { ...manifest, tool: { name: 'inferbench', version: toolVersion() }, command: 'merge', mergedFrom: doc.merged?.shards.map((s) => s.dir) },
    summary: doc,
    complete: true,
    records,
    files: { 'table.md': renderMarkdownReport(doc), 'table.csv': renderCsvReport(doc) },
  });
  const summary = { ...doc, complete: true };
  {
    const m = doc.merged;
    if (m) {
      for (const s of m.shards) {
        const late = s.startOffsetMs !== undefined ? `, started ${s.startOffsetMs.toFixed(1)} ms after --start-at` : '';
        say(`shard ${s.index}/${m.shards.length}: ${s.requests} requests from ${s.dir}${late}; clock shift ${s.clockShiftMs.toFixed(1)} ms`);
      }
    }
    if (m) say(`rows: the shards started each row within ${m.rowStartSkewMs.toFixed(1)} ms of each other; each row's figures cover the window in which every shard was measuring`);
    say(`\n${renderTerminalReport(doc, { style: terminalStyle(human) })}`);
    // A shard's manifest keeps the run's options as run resolved them.
    if (base) say(shortWindowRules(base.manifest.options as RunOptions));
    if (doc.health) say(healthLine(doc.health));
    say(`saved: ${join(outDir, 'summary.json')}, requests.jsonl, table.md, table.csv`);
    if (flags.json) io.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...summary }, null, 2)}\n`);
    return 0;
  }
}
