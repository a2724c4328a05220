import { readdirSync } from 'node:fs';
import { parseSeedFile } from '../src/sim/seeds.js';
import { seedScenarios } from '../src/sim/seed-compare.js';
import { predictFitPoints } from '../src/sim/calibrate/fit.js';
import { PRIORS } from '../src/sim/calibrate/priors.js';
const dir = 'data/seeds';
const tables = readdirSync(dir).filter((f) => f.endsWith('.txt')).flatMap((f) => parseSeedFile(`${dir}/${f}`));
const sc = seedScenarios(tables);
for (const t of [...new Set(sc.map(s=>s.table))]) {
  const t0 = performance.now();
  predictFitPoints(sc.filter(s=>s.table===t), PRIORS);
  console.log(t, (performance.now()-t0).toFixed(0));
}
