import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSeedFile } from '../../src/sim/seeds.js';
import { repoRoot, runCli } from '../helpers/cli.js';

/** Text files the product, its tests, benches and CI run (fixture generators and data excluded). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(repoRoot, dir))) {
    const rel = join(dir, name);
    if (statSync(join(repoRoot, rel)).isDirectory()) {
      if (name !== 'node_modules' && name !== 'fixtures') out.push(...sourceFiles(rel));
    } else if (/\.(ts|mjs|js|sh|json)$/.test(name) || dir === '.ci') out.push(rel);
  }
  return out;
}

const seedsDir = join(repoRoot, 'data', 'seeds');

describe('a fresh clone has everything the product and its tests need', () => {
  it('no code, test, bench, script or CI step reads the reference folder beside the repository', () => {
    const files = ['src', 'test', 'bench', 'scripts', '.ci'].flatMap(sourceFiles).concat('package.json');
    // Code, not comments: a comment citing the reference notes reads nothing.
    const code = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)(\/\/|#).*$/gm, '$1');
    const hits = files.filter((f) => /\.\.\/shared\b|\/work\/shared\b/.test(code(readFileSync(join(repoRoot, f), 'utf8'))));
    expect(hits).toEqual([]);
  });

  it('the README sends readers to the seed tables in the repository', () => {
    const lines = readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n');
    const outside = ['..', 'shared', 'seeds'].join('/');
    expect(lines.filter((l) => l.includes(outside))).toEqual([]);
  });

  it('the published seed tables ship in data/seeds, with their source noted', () => {
    const tables = readdirSync(seedsDir).filter((f) => f.endsWith('.txt')).sort();
    expect(tables).toEqual(['000_e8960ffa2ce0f9cc.txt', '002_66e0282fd3791331.txt', '003_4d3f484aa116390c.part.txt', '004_44f3a8b9f2336bbb.txt']);
    for (const t of tables) expect(parseSeedFile(join(seedsDir, t)).length, t).toBeGreaterThan(0);
    const readme = readFileSync(join(seedsDir, 'README.md'), 'utf8');
    for (const t of tables) expect(readme).toContain(t);
    expect(readme).toMatch(/published/);
  });

  it('predict --seed-file data/seeds/… works from the repository root', async () => {
    const res = await runCli(['predict', '--seed-file', 'data/seeds/003_4d3f484aa116390c.part.txt', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const doc = JSON.parse(res.stdout) as { rows: unknown[] };
    expect(doc.rows.length).toBeGreaterThan(10);
  });

  it('npm test runs scripts/test.sh, which passes its arguments to vitest run (as .ci/run uses them)', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test']).toBe('bash scripts/test.sh');
    const tmp = mkdtempSync(join(tmpdir(), 'inferbench-testsh-'));
    try {
      const results = join(tmp, 'results.json');
      const r = spawnSync('bash', ['scripts/test.sh', 'test/sim/seeds.test.ts', '--reporter=json', `--outputFile=${results}`], {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 240_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(existsSync(results)).toBe(true);
      const doc = JSON.parse(readFileSync(results, 'utf8')) as { numPassedTests: number; testResults: Array<{ name: string }> };
      expect(doc.testResults.map((t) => relative(repoRoot, t.name))).toEqual(['test/sim/seeds.test.ts']);
      expect(doc.numPassedTests).toBeGreaterThan(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 300_000);
});
