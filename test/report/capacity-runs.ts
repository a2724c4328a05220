import type { CapacityProbe, CapacityResult } from '../../src/load/capacity-types.js';
import type { StageSummary } from '../../src/metrics/summary.js';
import type { StoredRun } from '../../src/store/run-store.js';

/**
 * In-memory capacity runs for the ranking's unit tests: a search's probes at given loads, each passing below the
 * capacity and failing above it, with rows whose achieved rate is what the probe completed.
 */
export interface CapacityRunSpec {
  id: string;
  engine: string;
  gpu?: string;
  gpus?: number;
  label?: string;
  axis?: 'rate' | 'concurrency';
  /** Probed loads and whether each passed (the monotone fit is the probes themselves: they are monotone here). */
  probes: Array<[load: number, pass: boolean, achievedReqPerS?: number]>;
  slo?: CapacityResult['slo'];
  attainment?: number;
  maxErrorShare?: number;
  precision?: number;
  /** Fields of the search's answer beyond the probes (settled, reproducibility, …). */
  capacity?: Partial<CapacityResult>;
  /** A predicted run (virtual time). */
  predicted?: boolean;
}

function row(index: number, load: number, axis: 'rate' | 'concurrency', reqPerS: number, pass: boolean): StageSummary {
  const attainment = pass ? 99.6 : 71.2;
  return {
    index,
    label: axis === 'rate' ? `asynchronous@${load.toFixed(2)} req/sec` : `concurrent@${load}`,
    kind: axis === 'rate' ? 'open' : 'closed',
    ...(axis === 'rate' ? { targetRate: load } : { concurrency: load }),
    durationS: 30,
    requests: { total: 250, ok: 250, errors: 0, incomplete: 0, warmup: 0 },
    errorsByCode: {},
    failureShare: 0,
    requestThroughput: reqPerS,
    outputTokenThroughput: reqPerS * 128,
    promptTokenThroughput: reqPerS * 512,
    totalTokenThroughput: reqPerS * 640,
    sendRate: axis === 'rate' ? load : reqPerS,
    belowTarget: false,
    meanConcurrency: 4,
    metrics: {},
    outputLengthMismatches: 0,
    promptLengthMismatches: 0,
    tokenCountSources: {},
    sloAttainment: { percent: attainment, met: Math.round(2.5 * attainment), of: 250 },
    interrupted: false,
  };
}

export function capacityRun(spec: CapacityRunSpec): StoredRun {
  const axis = spec.axis ?? 'rate';
  const unit = axis === 'rate' ? 'req/s' : 'streams';
  const sorted = [...spec.probes].sort((a, b) => a[0] - b[0]);
  const stages = sorted.map(([load, pass, achieved], i) => row(i, load, axis, achieved ?? (axis === 'rate' ? load * 0.995 : load * 0.8), pass));
  const probes: CapacityProbe[] = sorted.map(([load, pass], i) => ({
    stage: i,
    load,
    attainment: stages[i]?.sloAttainment?.percent ?? 0,
    requests: 250,
    errorShare: 0,
    pass,
  }));
  const passes = probes.filter((p) => p.pass).map((p) => p.load);
  const feasibleMax = passes.length ? Math.max(...passes) : null;
  const firstBreach = probes.find((p) => !p.pass && (feasibleMax === null || p.load > feasibleMax))?.load ?? null;
  const capacity: CapacityResult = {
    axis,
    unit,
    feasibleMax,
    firstBreach,
    precision: spec.precision ?? (axis === 'rate' ? 0.05 : 1),
    attainment: spec.attainment ?? 99,
    maxErrorShare: spec.maxErrorShare ?? 0.01,
    slo: spec.slo ?? { ttftMs: 300 },
    probes,
    fitted: probes.map((p) => ({ load: p.load, attainment: p.attainment, errorShare: 0, pass: p.pass, runs: 1 })),
    verdict: '',
    ...spec.capacity,
  };
  return {
    id: spec.id,
    name: `20261201-000000-${spec.id}`,
    dir: `/nonexistent/${spec.id}`,
    schemaVersion: 1,
    warnings: [],
    summary: {
      tool: { name: 'inferbench', version: 'test' },
      runId: spec.id,
      createdAt: '2026-12-01T00:00:00Z',
      finishedAt: '2026-12-01T00:10:00Z',
      layout: 'sweep',
      context: {
        model: 'Qwen2-72B-Instruct',
        engine: spec.engine,
        ...(spec.gpu ? { gpu: spec.gpu } : {}),
        ...(spec.gpus !== undefined ? { gpus: spec.gpus } : {}),
        ...(spec.label ? { label: spec.label } : {}),
        promptTokens: 512,
        outputTokens: 128,
        ...(spec.predicted ? { predicted: true } : {}),
      },
      target: { api: 'openai-completions', engine: spec.engine, model: 'Qwen2-72B-Instruct', simulated: false },
      profile: 'capacity',
      workload: 'fixed lengths 512/128',
      windowRules: 'steady window',
      stages,
      capacity,
      interrupted: false,
      notes: [],
    },
  };
}
