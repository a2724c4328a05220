import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/metrics/record.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { SimServer } from '../../src/sim/server/index.js';
import { loadTrace } from '../../src/workload/trace.js';
import { runCli } from '../helpers/cli.js';
import { start } from '../sim/server-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'ib-sessions-'));
let sim: SimServer;
beforeAll(async () => {
  sim = await start('vllm', { model: 'Qwen2-7B-Instruct', modelTimeScale: 0.05 });
});
afterAll(async () => sim.close());

// Three sessions of three turns (AIPerf-style session_id + delay), one single request without a session.
const TRACE = [
  { session_id: 'a', timestamp: 0, input_length: 96, output_length: 12 },
  { session_id: 'b', timestamp: 150, input_length: 80, output_length: 10 },
  { session_id: 'a', delay: 120, input_length: 24, output_length: 12 },
  { timestamp: 200, input_length: 64, output_length: 8 },
  { session_id: 'a', delay: 120, input_length: 24, output_length: 12 },
  { session_id: 'b', delay: 80, input_length: 16, output_length: 10 },
  { session_id: 'c', timestamp: 300, input_length: 64, output_length: 8 },
  { session_id: 'c', input_length: 16, output_length: 8 },
  { session_id: 'b', delay: 80, input_length: 16, output_length: 10 },
  { session_id: 'c', delay: 40, input_length: 16, output_length: 8 },
];

describe('session traces: session_id and delay replayed as conversations (issue 14, item 4)', () => {
  it('parses sessions: later turns take their session start and keep file order; a bad delay is one line', async () => {
    const path = join(dir, 'sessions.jsonl');
    writeFileSync(path, TRACE.map((r) => JSON.stringify(r)).join('\n'));
    const entries = await loadTrace(path);
    expect(entries.map((e) => `${e.session ?? '-'}${e.delayMs !== undefined ? `+${e.delayMs}` : ''}`)).toEqual(['a', 'a+120', 'a+120', 'b', 'b+80', 'b+80', '-', 'c', 'c', 'c+40']);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify({ session_id: 'x', delay: -1, input_length: 4, output_length: 4 })}\n`);
    await expect(loadTrace(bad)).rejects.toThrow(/bad.jsonl:1: "timestamp" \(ms\) must be a number ≥ 0 on the first row of a session; "delay"/);
  });

  it('replays each session as a conversation: turns in order after the previous reply + delay, the real replies in the history, per-session figures', async () => {
    const path = join(dir, 'sessions.jsonl');
    writeFileSync(path, TRACE.map((r) => JSON.stringify(r)).join('\n'));
    const out = join(dir, 'run');
    const res = await runCli(['run', '--target', sim.url, '--api', 'openai-chat', '--profile', 'replay', '--trace', path, '--tokenizer', 'approx', '--idle-wait', '0', '--out', out, '--no-progress']);
    expect(res.code, res.stderr).toBe(0);
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
    expect(records).toHaveLength(10);
    const bySession = new Map<number, RequestRecord[]>();
    for (const r of records) bySession.set(r.conversationId as number, [...(bySession.get(r.conversationId as number) ?? []), r]);
    expect([...bySession.values()].map((rs) => rs.length).sort()).toEqual([1, 3, 3, 3]);
    for (const rs of bySession.values()) {
      rs.sort((x, y) => (x.turn ?? 0) - (y.turn ?? 0));
      for (let t = 1; t < rs.length; t++) {
        const prev = rs[t - 1] as RequestRecord;
        const cur = rs[t] as RequestRecord;
        // Sent after the previous reply (plus its delay), and the server counted the history: earlier prompt + reply + this message.
        expect(cur.sentAtMs).toBeGreaterThanOrEqual(prev.endAtMs);
        expect(cur.promptTokens).toBeGreaterThan(prev.promptTokens + prev.outputTokens);
      }
    }
    const a = bySession.get(0) as RequestRecord[];
    expect((a[1] as RequestRecord).sentAtMs - (a[0] as RequestRecord).endAtMs).toBeGreaterThanOrEqual(119);
    const row = (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { stages: StageSummary[] }).stages[0] as StageSummary;
    expect(row.sessions?.count).toBe(4);
    expect(row.sessions?.meanTurns).toBe(2.5);
    expect(res.stdout).toMatch(/4 sessions, 2\.5 turns each, first send → last reply p50/);
  }, 60_000);
});
