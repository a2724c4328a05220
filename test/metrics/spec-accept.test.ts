/**
 * Speculative decoding measured end to end against the simulator told `--spec-decode 4:0.7` (issue 14, item 2):
 * vLLM's counters give the acceptance rate over the row, SGLang's per-request `spec_verify_ct` the tokens per
 * verify pass. Both must match what the simulator was told within 2%.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { SimServer } from '../../src/sim/server/index.js';
import { runCli } from '../helpers/cli.js';
import { start } from '../sim/server-helpers.js';

const K = 4;
const ACCEPT = 0.7;
const dir = mkdtempSync(join(tmpdir(), 'ib-spec-'));

async function runAgainst(server: SimServer, api: string, out: string): Promise<{ row: StageSummary; records: RequestRecord[]; stdout: string }> {
  // 32 requests × 512 tokens ≈ 4,300 verify passes: the acceptance estimate's spread is well under 1%.
  const res = await runCli(['run', '--target', server.url, '--api', api, '--model', 'Llama-3.1-8B', '--tokenizer', 'approx', '--profile', 'concurrent',
    '--concurrency', '16', '--max-requests', '32', '--prompt-tokens', '64', '--output-tokens', '512', '--idle-wait', '0', '--out', join(dir, out), '--no-progress']);
  expect(res.code, res.stderr).toBe(0);
  const row = (JSON.parse(readFileSync(join(dir, out, 'summary.json'), 'utf8')) as { stages: StageSummary[] }).stages[0] as StageSummary;
  // The row's own requests: cool-down records (sent after its window closed, the last ones cancelled) are left out.
  const records = readFileSync(join(dir, out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord).filter((r) => r.cooldown !== true);
  return { row, records, stdout: res.stdout };
}

describe('speculative decoding acceptance against the simulator (--spec-decode 4:0.7)', () => {
  let vllm: SimServer;
  let sglang: SimServer;
  beforeAll(async () => {
    [vllm, sglang] = await Promise.all([start('vllm', { specDecode: { k: K, accept: ACCEPT } }), start('sglang', { specDecode: { k: K, accept: ACCEPT } })]);
  });
  afterAll(async () => Promise.all([vllm?.close(), sglang?.close()]));

  it("vLLM: the acceptance rate from the server's counters over the row is the one told, within 2%", async () => {
    const { row, stdout } = await runAgainst(vllm, 'openai-completions', 'vllm');
    const spec = row.server?.specDecode;
    expect(spec?.draftTokens).toBeGreaterThan(10_000);
    expect(Math.abs((spec?.acceptanceRate as number) / ACCEPT - 1)).toBeLessThan(0.02);
    expect(stdout).toMatch(/speculative decoding \(the server's counters over each row\)/);
    // Several tokens leave per chunk: mean tokens per chunk near 1 + K·accept.
    expect(row.metrics.tokensPerChunk?.mean as number).toBeGreaterThan(2.5);
  }, 60_000);

  it('SGLang native: spec_verify_ct per request gives 1 + K·accept tokens per verify pass, within 2%', async () => {
    const { row, records, stdout } = await runAgainst(sglang, 'sglang', 'sglang');
    expect(records).toHaveLength(32);
    for (const r of records) expect(r.specVerifySteps).toBeGreaterThan(0);
    const a = row.specAcceptLength;
    expect(a?.requests).toBe(records.length);
    expect(Math.abs((a?.tokensPerVerify as number) / (1 + K * ACCEPT) - 1)).toBeLessThan(0.02);
    expect(stdout).toMatch(/tokens per verify pass over 32 requests/);
    // A step's tokens leave in one event, as SGLang streams them.
    expect(row.metrics.tokensPerChunk?.mean as number).toBeGreaterThan(2.5);
  }, 60_000);

  it('SGLang OpenAI routes: a step is one chunk (completions) or one delta per phase (chat with reasoning)', async () => {
    const { row } = await runAgainst(sglang, 'openai-completions', 'sglang-oai');
    expect(row.metrics.tokensPerChunk?.mean as number).toBeGreaterThan(2.5);
    const { row: chat } = await runAgainst(sglang, 'openai-chat', 'sglang-chat');
    expect(chat.metrics.tokensPerChunk?.mean as number).toBeGreaterThan(2.5);
  }, 60_000);
});

describe('predict --spec-decode', () => {
  const predict = (extra: string[]): ReturnType<typeof runCli> =>
    runCli(['predict', '--profile', 'concurrent', '--concurrency', '8', '--max-requests', '64', '--output-tokens', '256', '--json', ...extra]);
  const itl = (stdout: string): number => ((JSON.parse(stdout) as { stages: StageSummary[] }).stages[0] as StageSummary).metrics.itlMs?.mean as number;

  it('several tokens per step cut the predicted ITL; the engine note says so; a malformed value is one line, exit 2', async () => {
    const [plain, spec, bad] = await Promise.all([predict([]), predict(['--spec-decode', '4:0.7']), predict(['--spec-decode', '4'])]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(spec.code, spec.stderr).toBe(0);
    // 1 + 4·0.7 = 3.8 tokens per step at a somewhat dearer step: well under half the plain ITL.
    expect(itl(spec.stdout)).toBeLessThan(itl(plain.stdout) / 2);
    expect(JSON.parse(spec.stdout).notes.join(' ')).toMatch(/speculative decoding \(4 drafts per step, 0.7 accepted\)/);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/--spec-decode "4": expected K:ACCEPT/);
  }, 60_000);
});
