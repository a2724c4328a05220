import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { AIPERF_DIR, GENAI_DIR, GUIDELLM, guidellmSuccessful, SGLANG, sourceJson, VLLM } from './helpers.js';

let root: string;
let results: string;
let ids: { guidellm: string; vllm: string; sglang: string; aiperf: string; genai: string };
let inferbenchRun: string;

const idOf = (stdout: string, file: string): string => {
  const line = stdout.split('\n').find((l) => l.startsWith(`imported ${file}:`));
  const id = /\(id ([0-9a-f]{8})\)$/.exec(line ?? '')?.[1];
  if (!id) throw new Error(`no id for ${file} in:\n${stdout}`);
  return id;
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ib-import-cli-'));
  results = join(root, 'inferbench-results');
  // An inferbench run of a server at 8 streams, 50 requests, 64/32 tokens: the simulated engine, in-process.
  inferbenchRun = join(results, '20261122-230000-inferbench-c8');
  const [run, imported] = await Promise.all([
    runCli(['run', '--profile', 'concurrent', '--concurrency', '8', '--max-requests', '50', '--prompt-tokens', '64', '--output-tokens', '32', '--no-progress', '--label', 'inferbench', '--out', inferbenchRun]),
    runCli(['import', GUIDELLM, VLLM, SGLANG, AIPERF_DIR, GENAI_DIR, '--results', results]),
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(imported.code, imported.stderr).toBe(0);
  ids = { guidellm: idOf(imported.stdout, GUIDELLM), vllm: idOf(imported.stdout, VLLM), sglang: idOf(imported.stdout, SGLANG), aiperf: idOf(imported.stdout, AIPERF_DIR), genai: idOf(imported.stdout, GENAI_DIR) };
  expect(imported.stderr).toContain('5 of 5 files imported');
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const oneLine = (stderr: string): string => {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0] as string;
};

describe('inferbench import', () => {
  it('lists imported runs in ls, marked with their tool', async () => {
    const ls = await runCli(['ls', '--results', results]);
    expect(ls.code, ls.stderr).toBe(0);
    for (const id of Object.values(ids)) expect(ls.stdout).toContain(id);
    // The label stays as given; a column of its own says where the figures came from.
    expect(ls.stdout).toMatch(/\|\s+imported \(guidellm\)\s+\|\s+guidellm 0\.7\.3\.post0\+gee7a774\s+\|/);
    expect(ls.stdout).toContain('imported (vllm-bench-serve)');
    expect(ls.stdout).not.toContain('(imported');
    const json = JSON.parse((await runCli(['ls', '--results', results, '--json'])).stdout) as { id: string; source?: { tool: string } }[];
    expect(json.filter((r) => r.source).map((r) => r.source?.tool).sort()).toEqual(['aiperf', 'genai-bench', 'guidellm', 'sglang-bench-serving', 'vllm-bench-serve']);
    expect(json.find((r) => r.source === undefined)).toBeDefined(); // the measured run
  });

  it('compares an imported GuideLLM run, an imported vLLM run and an inferbench run side by side, with the definitions note', async () => {
    const refused = await runCli(['compare', inferbenchRun, ids.guidellm, ids.vllm, '--results', results, '--format', 'md', '--out', join(root, 'cmp-refused')]);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toMatch(/not comparable .*window rules.*--allow-mismatch/);

    const out = join(root, 'cmp');
    const r = await runCli(['compare', inferbenchRun, ids.guidellm, ids.vllm, '--results', results, '--allow-mismatch', '--format', 'md', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('WARNING: comparing runs that differ in');
    const tables = r.stdout.split('\n').filter((l) => /^\|\s+concurrent@8\b[^|]*\|/.test(l)); // a mark (†, ‡) may follow the label on a loaded machine
    expect(tables, r.stdout).toHaveLength(3);
    // GuideLLM's own TTFT and request latency means, vLLM's TTFT mean and TPOT (inferbench's ITL), as the files hold them.
    const g = sourceJson(GUIDELLM);
    const v = sourceJson(VLLM);
    const [, guide, vllm] = tables.map((t) => t.split('|').map((c) => c.trim()));
    expect(guide?.[3]).toBe(`${(guidellmSuccessful(g, 'request_latency')['mean'] as number).toFixed(2)} sec`);
    expect(guide?.[4]).toBe(`${(guidellmSuccessful(g, 'time_to_first_token_ms')['mean'] as number).toFixed(2)} ms`);
    expect(vllm?.[4]).toBe(`${(v['mean_ttft_ms'] as number).toFixed(2)} ms`);
    expect(vllm?.[5]).toBe(`${(v['mean_tpot_ms'] as number).toFixed(2)} ms`);
    expect(vllm?.[2]).toBe(`${(v['request_throughput'] as number).toFixed(2)} req/sec`);
    expect(vllm?.[3]).toBe('—'); // vLLM's E2EL is not inferbench's request latency
    expect(r.stdout).toContain("- Definitions: imported runs are mapped onto inferbench's definitions");
    expect(r.stdout).toMatch(/imported from guidellm 0\.7\.3\.post0\+gee7a774 \(guidellm-0\.7-llamacpp-c8-n50\.json\); left out: time_per_output_token_ms \(TPOT\), chunk gap/);
    expect(r.stdout).toMatch(/imported from vllm-bench-serve \(version not recorded\) .*left out: request latency \(E2EL\)/);
    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toContain('Definitions:');
  });

  it('reports an imported run, with its notes, and exports it as llm-d reports', async () => {
    const out = join(root, 'report');
    const r = await runCli(['report', ids.genai, '--results', results, '--format', 'md,llmd', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('imported from genai-bench 0.0.2');
    const name = readFileSync(join(out, 'report.md'), 'utf8').match(/<!-- run [0-9a-f]+ · (\S+) -->/)?.[1];
    for (const i of [0, 1]) {
      const report = JSON.parse(readFileSync(join(out, `benchmark_report_v0.2,_${name}_${i}.json`), 'utf8')) as { version: string; scenario: { load: { standardized: { tool: string; stage: number } } } };
      expect(report.version).toBe('0.2');
      expect(report.scenario.load.standardized).toMatchObject({ tool: 'genai-bench', stage: i });
    }
  });

  it('goes on past a bad file, says what is wrong with it in one line, and exits 2', async () => {
    const bad = join(root, 'notes.json');
    writeFileSync(bad, '{"hello": "world"}');
    const r = await runCli(['import', GUIDELLM, bad, VLLM, '--results', join(root, 'mixed')]);
    expect(r.code).toBe(2);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('imported '))).toHaveLength(2);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errors).toEqual([`error: ${bad}: not a result file inferbench can import (known formats: GuideLLM benchmarks.json, vLLM bench serve --save-result JSON, SGLang bench_serving JSONL, AIPerf profile_export_aiperf.json (or its artifact folder), a genai-bench experiment folder (docs/import.md))`]);
    expect(r.stderr).toContain('2 of 3 files imported');
  });

  it('rejects missing, truncated and ambiguous inputs in one line, exit 2, and writes nothing', async () => {
    const cut = join(root, 'cut.json');
    writeFileSync(cut, readFileSync(VLLM, 'utf8').slice(0, 3000));
    const into = join(root, 'nothing');
    for (const [args, expected] of [
      [[join(root, 'nope.json')], `error: cannot read ${join(root, 'nope.json')}: no such file`],
      [[cut], `error: ${cut} is not valid JSON (`],
      [[GUIDELLM, VLLM, '--out', join(root, 'one')], 'error: --out names one run folder, but 2 files were given'],
      [[GUIDELLM, '--out', inferbenchRun], `error: --out ${inferbenchRun} is not empty`],
    ] as const) {
      const r = await runCli(['import', ...args, '--results', into]);
      expect(r.code).toBe(2);
      expect(oneLine(r.stderr).startsWith(expected), r.stderr).toBe(true);
    }
    expect(existsSync(join(into))).toBe(false);
  });
});
