import { describe, expect, it } from 'vitest';
import { PRIORS } from '../../src/sim/calibrate/priors.js';
import { lmdeployMaxBatchSize } from '../../src/sim/engine/profiles.js';
import {
  DEFAULT_CALIBRATION, type HardwareSpec, StepCostModel, describeSimEngine, findEngineProfile, findHardware, findModel,
} from '../../src/sim/index.js';

// Datasheet and engine-default facts the simulator rests on (src/sim/catalog/hardware.ts, src/sim/engine/profiles.ts).
describe('catalog facts: the three H100s', () => {
  it('"H100" keeps meaning the SXM board; SXM, PCIe and NVL are distinct GPUs with their datasheet figures', () => {
    const sxm = findHardware('H100');
    expect(findHardware('H100-SXM5')).toBe(sxm);
    expect(findHardware('h100 sxm 80gb')).toBe(sxm);
    expect(sxm).toMatchObject({ name: 'H100', tflops: 989, fp8Tflops: 1979, memGiB: 80, bwGBs: 3350, link: 'nvlink' });
    expect(sxm.power?.maxW).toBe(700);
    expect(sxm.nvlinkGroup).toBeUndefined();

    const pcie = findHardware('H100 PCIe');
    expect(pcie).toMatchObject({ name: 'H100-PCIe', tflops: 756, fp8Tflops: 1513, memGiB: 80, bwGBs: 2000, link: 'pcie' });
    expect(pcie.power?.maxW).toBe(350);

    const nvl = findHardware('H100 NVL');
    expect(findHardware('H100-NVL-94GB')).toBe(nvl);
    expect(nvl).toMatchObject({ name: 'H100-NVL', tflops: 835, fp8Tflops: 1671, memGiB: 94, bwGBs: 3900, link: 'nvlink', nvlinkGroup: 2 });
    expect(nvl.power?.maxW).toBe(400);
    // Power model: each board's idle draw is below its TDP, and the SXM board draws the most.
    for (const h of [sxm, pcie, nvl]) expect(h.power && h.power.idleW < h.power.maxW).toBe(true);
    expect(Math.max(pcie.power?.maxW ?? 0, nvl.power?.maxW ?? 0)).toBeLessThan(sxm.power?.maxW ?? 0);
    expect(PRIORS.hardware['H100-NVL']).toBeDefined();
  });

  it('H100 NVL: tensor parallelism within an NVLink pair uses NVLink constants, above a pair the PCIe ones', () => {
    const model = findModel('Llama-3.1-70B-Instruct').spec;
    const eng = findEngineProfile('vllm');
    const nvl = findHardware('H100-NVL');
    const asLink = (link: HardwareSpec['link']): HardwareSpec => ({ ...nvl, name: `test-${link}`, link, nvlinkGroup: undefined });
    const comm = (hw: HardwareSpec, tp: number): number =>
      new StepCostModel(model, hw, tp, 'fp16', eng, DEFAULT_CALIBRATION).breakdown({
        decodeSeqs: 32, decodeCtxSum: 32 * 1024, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 32,
      }).comm;
    // The test GPUs have no calibration entry: they take the link kind's priors, as NVL does above its pair.
    expect(comm(nvl, 4)).toBeCloseTo(comm(asLink('pcie'), 4), 9);
    expect(comm(nvl, 8)).toBeCloseTo(comm(asLink('pcie'), 8), 9);
    const nvlPrior = PRIORS.hardware['H100-NVL'];
    const nvlinkPrior = { ...nvl, name: 'test-pair', nvlinkGroup: undefined };
    const cal = { ...DEFAULT_CALIBRATION, hardware: { ...DEFAULT_CALIBRATION.hardware, 'test-pair': nvlPrior! } };
    const pair = new StepCostModel(model, nvl, 2, 'fp16', eng, DEFAULT_CALIBRATION);
    const ref = new StepCostModel(model, nvlinkPrior, 2, 'fp16', eng, cal);
    const b = { decodeSeqs: 8, decodeCtxSum: 8 * 512, prefillCount: 0, prefillPrior: [], prefillTokens: [], emittingSeqs: 8 };
    expect(pair.breakdown(b).comm).toBeCloseTo(ref.breakdown(b).comm, 9);
    expect(comm(nvl, 4) / 4).toBeGreaterThan(pair.breakdown(b).comm / 2);
  });
});

describe('catalog facts: engine batch limits', () => {
  it('LMDeploy default --max-batch-size by GPU (get_max_batch_size before v0.10): A100 256, H100 512, others 128', () => {
    expect(lmdeployMaxBatchSize(findHardware('A100-80GB'))).toBe(256);
    expect(lmdeployMaxBatchSize(findHardware('A100-40GB'))).toBe(256);
    for (const g of ['H100', 'H100-PCIe', 'H100-NVL']) expect(lmdeployMaxBatchSize(findHardware(g))).toBe(512);
    for (const g of ['L20', 'L40S', 'H200', 'H20', 'RTX-3090', 'A10']) expect(lmdeployMaxBatchSize(findHardware(g))).toBe(128);
    expect(describeSimEngine({ engine: 'lmdeploy', model: 'Qwen2-72B-Instruct', gpu: 'L20', gpus: 8 }).maxNumSeqs).toBe(128);
    expect(describeSimEngine({ engine: 'lmdeploy', model: 'Qwen2-7B-Instruct', gpu: 'A100-80GB', gpus: 1 }).maxNumSeqs).toBe(256);
  });

  it('vLLM V1 (get_batch_defaults): 1024 sequences / 8192 tokens on ≥ 70 GiB GPUs but A100, else 256 / 2048; V0 256', () => {
    const v1 = (gpu: string) => describeSimEngine({ engine: 'vllm', model: 'Qwen2-7B-Instruct', gpu, gpus: 1 });
    for (const g of ['H100', 'H100-PCIe', 'H100-NVL', 'H200']) expect(v1(g)).toMatchObject({ maxNumSeqs: 1024, maxNumBatchedTokens: 8192 });
    for (const g of ['A100-80GB', 'L20', 'L40S']) expect(v1(g)).toMatchObject({ maxNumSeqs: 256, maxNumBatchedTokens: 2048 });
    expect(describeSimEngine({ engine: 'vllm-v0', model: 'Qwen2-7B-Instruct', gpu: 'H100', gpus: 1 }).maxNumSeqs).toBe(256);
  });

  it('NVIDIA ModelOpt FP8 checkpoints keep an FP8 KV cache by default; a 16-bit model keeps auto', () => {
    const fp8 = describeSimEngine({ engine: 'trtllm', model: 'nvidia/Llama-3.1-8B-Instruct-FP8', gpu: 'H100', gpus: 1 });
    expect(fp8).toMatchObject({ quant: 'fp8', kvCacheDtype: 'fp8' });
    expect(describeSimEngine({ engine: 'trtllm', model: 'Llama-3.1-8B-Instruct', gpu: 'H100', gpus: 1 }).kvCacheDtype).toBe('auto');
  });
});
