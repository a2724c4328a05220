/** The plan as text: header lines, the ranked table, launch commands, the verification, and what was left out and why. */
import { attainmentMeaning, describeSlo } from '../load/capacity.js';
import { renderMarkdown, type Table } from '../report/table.js';
import type { CandidateShape, PlanCandidate, PlanResult } from './types.js';

export interface RenderOptions {
  /** Feasible rows shown in the table (the rest are counted). */
  top: number;
  /** Launch commands printed. */
  launches: number;
  /** List every candidate, the infeasible ones with their reasons, in the table. */
  all: boolean;
}

const f = (n: number | null | undefined, d = 2): string => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(d));
const usd = (n: number | null | undefined, d = 2): string => (n === null || n === undefined ? '—' : `$${n.toFixed(d)}`);

export function shapeLabel(s: CandidateShape): string {
  return `${s.gpus}× ${s.gpu} ${s.quant} ${s.engine}`;
}

export function renderPlan(plan: PlanResult, opts: RenderOptions): string {
  const out: string[] = [];
  out.push(
    `plan: ${plan.model} at ${f(plan.rate)} req/s (${f(plan.outputTokensPerS, 0)} output tokens/s; ${plan.workload}; ${plan.arrival} arrivals)`,
    `SLO: ${plan.attainment}% of requests meet ${describeSlo(plan.slo)}, at most ${+(plan.maxErrorShare * 100).toFixed(2)}% failed — ${attainmentMeaning({ attainment: plan.attainment, slo: plan.slo })}`,
    `ranked by ${plan.objective === 'energy' ? 'energy: least GPU joules per output token first (--objective energy; $ beside it)' : 'cost: cheapest $ per 1M output tokens first (J/token beside it; --objective energy ranks by energy)'}`,
    '',
  );
  const feasible = plan.candidates.filter((c) => c.feasible);
  const rows = opts.all ? plan.candidates : feasible.slice(0, opts.top);
  if (feasible.length === 0) out.push('No candidate meets the SLO at this load (reasons below).', '');
  if (rows.length > 0) {
    out.push(renderMarkdown(planTable(rows, opts.all)));
    if (!opts.all && feasible.length > rows.length) out.push(`(${feasible.length - rows.length} more feasible candidates: --top N or --all to list them, --json for every field)`);
    out.push('');
  }
  const launches = feasible.slice(0, opts.launches).filter((c) => c.launch);
  if (launches.length > 0) {
    out.push('Launch one replica (then run the replicas behind a load balancer):');
    for (const c of launches) out.push(`  ${c.rank}. ${c.replicas} replica${c.replicas === 1 ? '' : 's'} of ${shapeLabel(c)}: ${c.launch}`);
    out.push('');
  }
  const v = plan.verification;
  if (v) {
    const p = v.point;
    out.push(
      `verification: ${shapeLabel(v.shape)} alone at its share of the load, ${f(v.ratePerReplica)} req/s (1 of ${v.replicas} replica${v.replicas === 1 ? '' : 's'}), ` +
        `${v.requests} requests with another seed: ${f(p.attainment, 1)}% met the SLO (p99 TTFT ${f(p.p99TtftMs, 0)} ms, p99 ITL ${f(p.p99ItlMs, 1)} ms) — ${p.meetsSlo ? 'meets the SLO' : 'MISSES the SLO'}`,
      `  repeat it: ${v.command}`,
      '',
    );
  }
  out.push(...routerLines(plan));
  out.push(...pdLines(plan));
  out.push(...uncertainLines(plan));
  out.push(...leftOut(plan));
  const c = plan.counts;
  out.push(
    `evaluated ${c.total} candidates in ${(plan.elapsedMs / 1000).toFixed(1)} s on ${plan.threads} thread${plan.threads === 1 ? '' : 's'}: ` +
      `${c.searched} capacity searches (${c.feasible} feasible, ${c.uncertain ? `${c.uncertain} uncertain, ` : ''}${c.sloUnmet} cannot meet the SLO), ${c.pruned} pruned by cost, ${c.skipped} cannot run`,
  );
  for (const n of plan.notes) out.push(`note: ${n}`);
  out.push(
    'note: capacity per replica is the highest rate one replica holds within the SLO (the search of `predict --profile capacity`, virtual time); ' +
      'tok/s per GPU at capacity = output tokens/s of one replica at its capacity over its GPUs (the Pareto chart\'s y axis; the required load per GPU is --json\'s tokensPerSecondPerGpu); ' +
      'tok/s per user = 1000 / mean ITL of one replica at its share of the load; ' +
      "J/token = GPU energy per output token at the required load, from the simulator's power model (docs/energy.md)",
  );
  return `${out.join('\n')}\n`;
}

/** `46.56 (38.20–52.10)`: the point capacity and its interval (pessimistic–optimistic; "none": no load there). */
function capacityCell(c: PlanCandidate): string {
  const iv = c.capacityInterval;
  if (!iv || c.capacityPerReplica === null) return f(c.capacityPerReplica);
  const end = (x: number | null): string => (x === null ? 'none' : f(x));
  return `${f(c.capacityPerReplica)} (${end(iv.low)}–${end(iv.high)})`;
}

/** Replicas sized on the pessimistic capacity, the optimistic count beside it: `3 (2 optimistic)`. */
function replicasCell(c: PlanCandidate): string {
  if (c.replicas === null) return '—';
  const opt = c.replicasOptimistic;
  return opt !== undefined && opt !== null && opt !== c.replicas ? `${c.replicas} (${opt} optimistic)` : String(c.replicas);
}

const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);

/** The "Routers" section: each evaluated candidate's clusters behind each router, and what a router saves. */
function routerLines(plan: PlanResult): string[] {
  const rc = plan.routerComparison;
  if (!rc) return [];
  const prefix = rc.prefix ? `${rc.prefix.groups} shared prefixes of ${rc.prefix.tokens} tokens` : 'no shared prefixes';
  const out = [
    `Routers: the ${rc.candidates} cheapest candidate${rc.candidates === 1 ? '' : 's'} as one cluster behind ${rc.routers.join(', ')} at ${f(plan.rate)} req/s (${prefix}; each replica its own KV and prefix cache, virtual time; ${(rc.elapsedMs / 1000).toFixed(1)} s):`,
  ];
  for (const c of plan.candidates) {
    if (!c.routers) continue;
    out.push(`  ${c.rank !== undefined ? `${c.rank}. ` : ''}${shapeLabel(c)} (sized without a router: ${c.replicas ?? '—'} replica${c.replicas === 1 ? '' : 's'}, ${usd(c.costPerHour)}/h)`);
    for (const r of c.routers) {
      const tried = r.tried.map((t) => `${t.replicas}: ${t.meetsSlo ? 'meets' : 'misses'}`).join(', ');
      const head = r.meetsSlo ? `${r.replicas} replica${r.replicas === 1 ? ' meets' : 's meet'} the SLO, ${usd(r.costPerHour)}/h` : 'misses the SLO on every count tried';
      out.push(`    ${r.router.padEnd(12)} ${head} — ${f(r.attainment, 1)}% met, TTFT p50 ${f(r.ttftMs, 0)} p99 ${f(r.p99TtftMs, 0)} ms, ITL p99 ${f(r.p99ItlMs, 1)} ms, cache hit ${pct(r.cacheHitRate)} (replicas tried: ${tried})`);
    }
  }
  for (const line of rc.lines) out.push(`  ${line}`);
  if (rc.best) out.push(`  cheapest with a router: ${rc.best.replicas} replica${rc.best.replicas === 1 ? '' : 's'} of ${shapeLabel(rc.best)} behind ${rc.best.router}, ${usd(rc.best.costPerHour)}/h (${usd(rc.best.costPerMillionOutputTokens, 3)} per 1M output tokens); the ranking counts each evaluated candidate at its cheapest option`);
  out.push('');
  return out;
}

/** The "Prefill/decode splits" section: each evaluated candidate's splits beside its colocated replicas. */
function pdLines(plan: PlanResult): string[] {
  const pc = plan.pdComparison;
  if (!pc) return [];
  const out = [
    `Prefill/decode splits: the ${pc.candidates} cheapest candidate${pc.candidates === 1 ? '' : 's'} of an engine that disaggregates (${pc.engines.join(', ')}) as P prefill + D decode engines at ${f(plan.rate)} req/s, splits ${pc.splits.join(', ')} (the KV moved over the GPU's link; virtual time; ${(pc.elapsedMs / 1000).toFixed(1)} s):`,
  ];
  if (pc.candidates === 0) out.push('  no feasible candidate runs an engine that disaggregates (--engine vllm,sglang,triton)');
  for (const c of plan.candidates) {
    if (!c.pd) continue;
    const b = c.pdColocated;
    const base = b ? ` — ${f(b.attainment, 1)}% met, TTFT p50 ${f(b.ttftMs, 0)} p99 ${f(b.p99TtftMs, 0)} ms, ITL p50 ${f(b.itlMs, 1)} p99 ${f(b.p99ItlMs, 1)} ms behind least-load` : '';
    out.push(`  ${c.rank !== undefined ? `${c.rank}. ` : ''}${shapeLabel(c)} (colocated: ${c.replicas ?? '—'} replica${c.replicas === 1 ? '' : 's'}, ${usd(c.costPerHour)}/h${base})`);
    if (c.pd.length === 0) out.push('    every split needs more engines than the colocated replicas and two more: not tried');
    for (const o of c.pd) {
      const tried = o.tried.map((t) => `${t.prefill}+${t.decode}: ${t.meetsSlo ? 'meets' : 'misses'}`).join(', ');
      const head = o.meetsSlo ? `${o.prefill} prefill + ${o.decode} decode meet the SLO, ${usd(o.costPerHour)}/h` : 'misses the SLO on every size tried';
      out.push(`    ${o.split.padEnd(5)} ${head} — ${f(o.attainment, 1)}% met, TTFT p50 ${f(o.ttftMs, 0)} p99 ${f(o.p99TtftMs, 0)} ms, ITL p50 ${f(o.itlMs, 1)} p99 ${f(o.p99ItlMs, 1)} ms (tried: ${tried})`);
    }
  }
  for (const line of pc.lines) out.push(`  ${line}`);
  if (pc.best) out.push(`  cheapest with a split: ${pc.best.prefill} prefill + ${pc.best.decode} decode engines of ${shapeLabel(pc.best)}, ${usd(pc.best.costPerHour)}/h (${usd(pc.best.costPerMillionOutputTokens, 3)} per 1M output tokens); the ranking counts each evaluated candidate at its cheapest option`);
  else if (pc.candidates > 0) out.push('  no split is cheaper than its colocated replicas here: they rank as sized');
  out.push('');
  return out;
}

/** `3 × prefix-aware $7.47`: the deployment a candidate is ranked by ("as sized": its own replicas, no router better). */
function deploymentCell(c: PlanCandidate): string {
  const d = c.deployment;
  if (!d) return '—';
  if (d.topology === 'pd') return `P/D ${d.prefill}+${d.decode} ${usd(d.costPerHour)}`;
  return d.router === null ? `as sized ${usd(d.costPerHour)}` : `${d.replicas} × ${d.router} ${usd(d.costPerHour)}`;
}

/** Candidates whose interval straddles the SLO: listed apart, to be measured rather than ranked. */
function uncertainLines(plan: PlanResult): string[] {
  const cs = plan.candidates.filter((c) => c.status === 'uncertain');
  if (cs.length === 0) return [];
  const out = [`Uncertain — measure it (\`inferbench plan --verify\` runs a candidate against a real server): ${cs.length} candidate${cs.length === 1 ? '' : 's'} whose capacity interval straddles the SLO`];
  for (const c of cs.slice(0, 5)) out.push(`  ${shapeLabel(c)}: ${c.uncertain ?? ''}`);
  if (cs.length > 5) out.push(`  … ${cs.length - 5} more (--json lists them: status "uncertain")`);
  out.push('');
  return out;
}

function planTable(rows: readonly PlanCandidate[], withReasons: boolean): Table {
  const level = rows.find((c) => c.capacityInterval)?.capacityInterval?.level;
  const headers = ['#', 'GPU', 'GPUs/replica', 'Quant', 'Engine', level !== undefined ? `Capacity/replica (req/s, ${level}% interval)` : 'Capacity/replica (req/s)', level !== undefined ? 'Replicas (pessimistic)' : 'Replicas', 'GPUs', '$/hour', '$ per 1M output tokens', 'J/token', 'Output tok/s per GPU at capacity', 'Output tok/s per user', 'TTFT p99 (ms)', 'ITL p99 (ms)'];
  // Routers compared (plan --router): what each evaluated candidate is ranked by, beside its own sizing.
  const routed = rows.some((c) => c.routers || c.pd);
  if (routed) headers.push('Ranked as ($/hour)');
  if (withReasons) headers.push('Why not');
  return {
    headers,
    rows: rows.map((c) => {
      const row = [
        c.rank !== undefined ? String(c.rank) : '—',
        c.gpu,
        String(c.gpus),
        c.quant,
        c.engine,
        capacityCell(c),
        replicasCell(c),
        c.totalGpus !== null ? String(c.totalGpus) : '—',
        usd(c.costPerHour),
        usd(c.costPerMillionOutputTokens, 3),
        f(c.joulesPerOutputToken, 3),
        // At capacity (what one GPU can serve, the Pareto chart's y axis), not the required load per GPU, which is the
        // header's output tokens/s over the GPUs column and the same in every row of equal size (--json: tokensPerSecondPerGpu).
        f(c.atCapacity?.outputTokensPerSPerGpu, 1),
        f(c.tokensPerSecondPerUser, 1),
        c.feasible ? f(c.atLoad?.p99TtftMs, 0) : '—',
        c.feasible ? f(c.atLoad?.p99ItlMs, 1) : '—',
      ];
      if (routed) row.push(deploymentCell(c));
      if (withReasons) row.push(c.reason ?? '');
      return row;
    }),
  };
}

/** A reason's kind, so hundreds of skipped shapes read as a few lines. */
export function reasonKind(c: PlanCandidate): string {
  const r = c.reason ?? '';
  if (c.status === 'pruned') return 'pruned: one replica costs more than the cheapest deployment found';
  if (c.status === 'uncertain') return 'uncertain — measure it: the capacity interval straddles the SLO';
  if (c.status === 'slo-unmet') return r.startsWith('even one request') || r.startsWith('no load') ? 'SLO not met even at one request at a time' : 'SLO not met at the share of the load';
  if (/does not fit .*GPU/.test(r)) return 'weights leave no room for the KV cache';
  if (/attention heads/.test(r)) return 'attention heads do not split over the GPUs';
  if (/context/.test(r)) return 'the longest request does not fit the context';
  if (/TurboMind/.test(r)) return 'the engine cannot load this weight format';
  return r;
}

function leftOut(plan: PlanResult): string[] {
  const groups = new Map<string, PlanCandidate[]>();
  for (const c of plan.candidates) {
    if (c.feasible || c.status === 'uncertain') continue;
    const k = reasonKind(c);
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  if (groups.size === 0) return [];
  const out = ['Not feasible (every reason is in --json; --all lists them in the table):'];
  for (const [kind, cs] of groups) {
    const examples = cs.slice(0, 3).map(shapeLabel).join('; ');
    out.push(`  ${cs.length} × ${kind} — e.g. ${examples}${cs.length > 3 ? '; …' : ''}`);
    const first = cs[0];
    if (first?.reason && first.status !== 'pruned') out.push(`      ${first.reason}`);
  }
  out.push('');
  return out;
}
