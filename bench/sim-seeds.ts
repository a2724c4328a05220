import { parseSeedFile } from '../src/sim/seeds.js';
import { compareSeedTables } from '../src/sim/seed-compare.js';
import { readdirSync } from 'node:fs';

const dir = process.argv[2] ?? 'data/seeds';
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).map((f) => `${dir}/${f}`);
const t0 = performance.now();
const rows = compareSeedTables(files.flatMap(parseSeedFile));
const ms = performance.now() - t0;
let table = '';
for (const r of rows) {
  if (r.table !== table) console.log(`\n## ${(table = r.table)}`);
  console.log(`${r.row.padEnd(28)} ${r.metric.padEnd(22)} pub ${r.published.toFixed(2).padStart(9)} pred ${r.predicted.toFixed(2).padStart(9)} ${r.errorPct.toFixed(1).padStart(7)}% ${r.role}${r.note ? ` (${r.note})` : ''}`);
}
const stat = (role: string) => {
  const e = rows.filter((r) => r.role === role).map((r) => Math.abs(r.errorPct)).sort((a, b) => a - b);
  return `${role}: n=${e.length} median |err| ${e[Math.floor(e.length / 2)]?.toFixed(1)}% max ${e[e.length - 1]?.toFixed(1)}%`;
};
console.log(`\n${stat('fit')}\n${stat('check')}\n(${ms.toFixed(0)} ms)`);
