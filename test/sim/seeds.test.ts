import { describe, expect, it } from 'vitest';
import { parseSeedText } from '../../src/sim/seeds.js';
import { seedEngineName } from '../../src/sim/seed-compare.js';

const GRID = `# Qwen-14B

## A100 40G

## vllm v0.2.7

| Input Length | Output Length | Throughput (requests/s) | Throughput (output token/s) | Average latency per token (ms) | Average latency per output token (ms) |
| :----------: | :-----------: | :---------------------: | :-------------------------: | :----------------------------: | :-----------------------------------: |
|     128      |      128      |          5.84           |           747.57            |             12.85              |                 25.69                 |
|     512      |      128      |          2.49           |           318.54            |              5.35              |                 26.76                 |
`;

const SWEEP = `# LLM-Inference

- **Qwen2-72B-Instruct-AWQ**, **2**张**A100 80GB**, **vLLM**, prompt_tokens=512, generated_tokens=128

| Benchmark | Requests per Second | Request Latency | Time to First Token | Inter Token Latency | Output Token Throughput |
| :---: | :---: | :---: | :---: | :---: | :---: |
| synchronous | 0.33 req/sec | 3.04 sec | 271.30 ms | 21.94 ms | 41.50 tokens/sec |
| asynchronous@0.63 req/sec | 0.00 req/sec | 0.00 sec | 0.00 ms | 0.00 ms | 0.00 tokens/sec |
| asynchronous@1.81 req/sec | 1.76 req/sec | 7.16 sec | 1221.93 ms | 47.64 ms | 220.15 tokens/sec |
| asynchronous@1.52 req/sec | 1.89 req/sec | 8.15 sec | 2470.27 ms | 45.56 ms | 236.56 tokens/sec |
| asynchronous@2.11 req/sec | 2.00 req/sec | 13.67sec | 305.82 ms | 50.51 ms | 251.25 tokens/sec |
| throughput | 3.00 req/sec | 32.95 sec | 21991.54 ms | 88.49 ms | 371.77 tokens/sec |

- **Qwen2-72B-Instruct**, **8**张**L20 48GB**, lmdeploy, prompt_tokens=512, generated_tokens=128
  
| Benchmark | Requests per Second | Request Latency | Time to First Token | Inter Token Latency | Output Token Throughput |
| :---: | :---: | :---: | :---: | :---: | :---: |
| synchronous | 0.26 req/sec | 3.85 sec | 243.20 ms | 28.34 ms | 33.29 tokens/sec |
`;

describe('seed parser', () => {
  it('parses grid tables with their model / GPU / engine headers', () => {
    const [t] = parseSeedText(GRID);
    expect(t?.kind).toBe('grid');
    if (t?.kind !== 'grid') return;
    expect([t.model, t.gpu, t.engine, t.engineVersion]).toEqual(['Qwen-14B', 'A100 40G', 'vllm', '0.2.7']);
    expect(t.rows[1]).toEqual({ inputLen: 512, outputLen: 128, reqPerS: 2.49, outTokPerS: 318.54, latPerTokenMs: 5.35, latPerOutputTokenMs: 26.76 });
    expect(seedEngineName(t.engine, t.engineVersion)).toBe('vllm-0.2');
  });

  it('parses sweep tables and flags zero, out-of-order and impossible rows', () => {
    const tables = parseSeedText(SWEEP);
    expect(tables).toHaveLength(2);
    const [a, b] = tables;
    if (a?.kind !== 'sweep' || b?.kind !== 'sweep') throw new Error('expected sweeps');
    expect([a.model, a.gpus, a.gpu, a.engine, a.promptTokens, a.outputTokens]).toEqual(['Qwen2-72B-Instruct-AWQ', 2, 'A100 80GB', 'vLLM', 512, 128]);
    expect(b.engine).toBe('lmdeploy');
    expect(b.rows[0]?.itlMs).toBe(28.34);
    const byLabel = Object.fromEntries(a.rows.map((r) => [r.label, r]));
    expect(byLabel['synchronous']?.valid).toBe(true);
    expect(byLabel['asynchronous@0.63 req/sec']?.issue).toBe('zero or unreadable row');
    expect(byLabel['asynchronous@1.52 req/sec']?.issue).toBe('out of order');
    expect(byLabel['asynchronous@2.11 req/sec']?.latencyS).toBe(13.67);
    expect(byLabel['asynchronous@2.11 req/sec']?.valid).toBe(true);
    expect(byLabel['throughput']?.outTokPerS).toBe(371.77);
  });
});
