import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_GPU_HOUR_PRICES, DEFAULT_PRICES_DATE, assumedPricesLine,
  hasPrice,
  unpricedLine, loadPriceFile, parsePriceList, resolvePrices } from '../../src/plan/prices.js';
import { BUILTIN_HARDWARE } from '../../src/sim/catalog/hardware.js';

const tmp = mkdtempSync(join(tmpdir(), 'inferbench-prices-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('GPU-hour prices', () => {
  it('parses GPU=USD lists under catalog names (aliases and a $ accepted)', () => {
    expect(parsePriceList('H100=2.49, a100-80g=$1.79,4090=0.4')).toEqual({ H100: 2.49, 'A100-80GB': 1.79, 'RTX-4090': 0.4 });
  });

  it('refuses unknown GPUs, bad pairs and prices that are not positive', () => {
    expect(() => parsePriceList('B300=9')).toThrow(/--gpu-hour-price: unknown GPU "B300"/);
    expect(() => parsePriceList('H100')).toThrow(/"H100" is not GPU=USD/);
    expect(() => parsePriceList('H100=free')).toThrow(/price of H100 must be a number of USD > 0/);
    expect(() => parsePriceList('H100=-1')).toThrow(/must be a number of USD > 0/);
    expect(() => parsePriceList(' , ')).toThrow(/is empty/);
  });

  it('reads a JSON price file and says what is wrong with a bad one', () => {
    const good = join(tmp, 'prices.json');
    writeFileSync(good, JSON.stringify({ H100: 3.1, L40S: 1 }));
    expect(loadPriceFile(good)).toEqual({ H100: 3.1, L40S: 1 });
    const list = join(tmp, 'list.json');
    writeFileSync(list, '[1,2]');
    expect(() => loadPriceFile(list)).toThrow(/expected a JSON object/);
    expect(() => loadPriceFile(join(tmp, 'missing.json'))).toThrow(/no such file/);
    const unknown = join(tmp, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ Z9: 1 }));
    expect(() => loadPriceFile(unknown)).toThrow(/unknown GPU "Z9"/);
  });

  it('has a dated assumption for the GPUs people rent, printed whenever one is used; the others are left out of a search with a note', () => {
    const priced = BUILTIN_HARDWARE.filter(({ name }) => DEFAULT_GPU_HOUR_PRICES[name] !== undefined).map((h) => h.name);
    for (const gpu of ['A100-40GB', 'A100-80GB', 'H100', 'H200', 'L40S', 'L20-48GB', 'RTX-4090']) expect(priced).toContain(gpu);
    for (const gpu of priced) expect(DEFAULT_GPU_HOUR_PRICES[gpu]).toBeGreaterThan(0);
    const unpriced = BUILTIN_HARDWARE.map((h) => h.name).filter((g) => !hasPrice(g, {}));
    expect(unpricedLine({ perGpuHour: {}, assumed: [], given: [], unpriced })).toMatch(/^not searched \(no price\): .* — add them with --gpu-hour-price /);
    expect(hasPrice(unpriced[0] as string, { flag: { [unpriced[0] as string]: 1 } })).toBe(true);
    const t = resolvePrices(['H100', 'L40S', 'H200'], { file: { H100: 3, L40S: 1.1 }, flag: { H100: 2 } });
    expect(t.perGpuHour).toEqual({ H100: 2, L40S: 1.1, H200: DEFAULT_GPU_HOUR_PRICES['H200'] });
    expect(t.given).toEqual(['H100', 'L40S']);
    expect(t.assumed).toEqual(['H200']);
    expect(assumedPricesLine(t)).toContain(`as of ${DEFAULT_PRICES_DATE}`);
    expect(assumedPricesLine(t)).toContain('H200 $3.49');
    expect(assumedPricesLine(resolvePrices(['H100'], { flag: { H100: 2 } }))).toBeUndefined();
  });

  it('asks for a price for a GPU the built-in table does not know', () => {
    expect(() => resolvePrices(['My-GPU'], {})).toThrow(/no price for GPU My-GPU/);
  });
});
