import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_ENGINES, DEFAULT_QUANTS, DEFAULT_TP, checkShape, enumerateShapes, resolveAxes } from '../../src/plan/space.js';
import { listHardware } from '../../src/sim/catalog/registry.js';

const longest = { promptTokens: 512, outputTokens: 128, flags: '--prompt-tokens/--output-tokens' };

describe('plan search space', () => {
  it('spans every catalog GPU × TP 1/2/4/8 × four quantizations × five engines by default', () => {
    const axes = resolveAxes('Qwen2-72B-Instruct', {});
    expect(axes.gpus).toEqual(listHardware());
    expect(axes.tp).toEqual([...DEFAULT_TP]);
    expect(axes.quants).toEqual([...DEFAULT_QUANTS]);
    expect(axes.engines).toEqual([...DEFAULT_PLAN_ENGINES]);
    const shapes = enumerateShapes(axes);
    expect(shapes).toHaveLength(axes.gpus.length * 4 * 4 * 5);
    expect(new Set(shapes.map((s) => `${s.gpu}/${s.gpus}/${s.quant}/${s.engine}`)).size).toBe(shapes.length);
  });

  it('narrows each axis by flag, accepting aliases, and names the quantization a suffixed model fixes', () => {
    const axes = resolveAxes('Qwen2-72B-Instruct', { gpus: ['h100-sxm', 'A100-80G'], tp: [4, 2, 4], quants: ['int4'], engines: ['trtllm', 'vllm'] });
    expect(axes).toEqual({ gpus: ['H100', 'A100-80GB'], tp: [2, 4], quants: ['gptq-int4'], engines: ['trtllm', 'vllm'] });
    expect(resolveAxes('Qwen2-72B-Instruct-AWQ', {}).quants).toEqual(['awq']);
    expect(() => resolveAxes('Qwen2-72B-Instruct-AWQ', { quants: ['fp16'] })).toThrow(/is the awq checkpoint/);
  });

  it('refuses unknown names with the known ones listed', () => {
    expect(() => resolveAxes('No-Such-Model', {})).toThrow(/unknown model "No-Such-Model"/);
    expect(() => resolveAxes('Qwen2-72B-Instruct', { gpus: ['B300'] })).toThrow(/unknown GPU "B300"/);
    expect(() => resolveAxes('Qwen2-72B-Instruct', { engines: ['nope'] })).toThrow(/unknown engine "nope"/);
    expect(() => resolveAxes('Qwen2-72B-Instruct', { tp: [16] })).toThrow(/--tp 16/);
  });

  it('skips what cannot run, each with its reason', () => {
    const fp16OnOne = checkShape('Qwen2-72B-Instruct', { gpu: 'A100-40GB', gpus: 1, quant: 'fp16', engine: 'vllm' }, longest);
    expect(fp16OnOne).toEqual({ ok: false, reason: expect.stringMatching(/does not fit 1× A100-40GB: .* GiB of weights per GPU/) });
    // Qwen2-7B has 28 attention heads: 8 GPUs cannot split them.
    const heads = checkShape('Qwen2-7B-Instruct', { gpu: 'H100', gpus: 8, quant: 'fp16', engine: 'vllm' }, longest);
    expect(heads).toEqual({ ok: false, reason: expect.stringMatching(/28 attention heads .* cannot be split over 8 GPUs/) });
    const format = checkShape('Qwen2-72B-Instruct', { gpu: 'H100', gpus: 4, quant: 'gptq-int8', engine: 'lmdeploy' }, longest);
    expect(format).toEqual({ ok: false, reason: expect.stringMatching(/TurboMind runs 4-bit weights/) });
    const context = checkShape('Llama-2-7B', { gpu: 'H100', gpus: 1, quant: 'fp16', engine: 'vllm' }, { promptTokens: 4000, outputTokens: 512, flags: '--prompt-tokens/--output-tokens' });
    expect(context).toEqual({ ok: false, reason: expect.stringMatching(/do not fit the 4096-token context/) });
    const fine = checkShape('Qwen2-72B-Instruct', { gpu: 'H100', gpus: 1, quant: 'awq', engine: 'vllm' }, longest);
    expect(fine.ok).toBe(true);
  });
});
