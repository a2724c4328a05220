/**
 * `inferbench k8s` (issue 13, item 3): the manifest it prints is a valid Indexed Job by the Kubernetes API schema
 * (kubernetes-models: the OpenAPI schema compiled into validators, no network), in both results forms, and the
 * pods run `inferbench run --plan /etc/inferbench/plan.json --shard $(JOB_COMPLETION_INDEX)/N --out /results/NAME/shard-…`,
 * the plan (the run flags resolved once, with the start instant) in a ConfigMap.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { Job, type IJob } from 'kubernetes-models/batch/v1';
import { ConfigMap, Pod, type IConfigMap } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { EXAMPLES } from '../src/cli/help-examples.js';
import { k8sCommand } from '../src/cli/k8s-command.js';
import { buildProgram } from '../src/cli/main.js';
import { InferbenchError } from '../src/core/errors.js';
import { parseRunPlan, type RunPlan } from '../src/runplan/schema.js';
import type { RawK8sFlags } from '../src/k8s/options.js';
import { repoRoot, runCli } from './helpers/cli.js';

const NOW = new Date('2026-11-24T09:28:00.250Z');
const RUN = ['--target', 'http://vllm.bench.svc:8000', '--profile', 'constant', '--rate', '30', '--max-seconds', '60'];

type Flags = Omit<RawK8sFlags, 'explicit'>;

/** Runs the command in-process: the k8s flags as commander would hand them over, the run flags as given. */
function generate(flags: Flags, runArgs: readonly string[] = RUN, typed?: (name: string) => boolean): { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const explicit = typed ?? ((name: keyof Flags): boolean => flags[name] !== undefined);
  const code = k8sCommand(runArgs, { ...flags, explicit }, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } }, NOW);
  expect(code).toBe(0);
  return { stdout, stderr };
}

/** A whole `inferbench k8s …` line, parsed by the real program, then generated in-process. */
function generateFromLine(line: string): { stdout: string; stderr: string } {
  const program = buildProgram();
  const cmd = program.commands.find((c) => c.name() === 'k8s') as Command;
  let got: { runArgs: string[]; flags: Flags; explicit: (n: string) => boolean } | undefined;
  cmd.action((runArgs: string[], flags: Flags, c: Command) => void (got = { runArgs, flags, explicit: (n) => c.getOptionValueSource(n) === 'cli' }));
  // Docs spell the command `npx inferbench …` (or bare `inferbench …` once `npm link` put it on PATH).
  program.parse(line.trim().replace(/^npx\s+/, '').split(/\s+/).slice(1), { from: 'user' });
  if (!got) throw new Error(`${line}: no action ran`);
  return generate(got.flags, got.runArgs, got.explicit);
}

/** The mistake's one line, or a failure when there was none. */
function problemOf(flags: Flags, runArgs: readonly string[] = RUN): string {
  try {
    generate(flags, runArgs);
  } catch (err) {
    expect(err).toBeInstanceOf(InferbenchError);
    expect((err as InferbenchError).code).toBe('E_CONFIG');
    return (err as Error).message;
  }
  throw new Error('no problem reported');
}

/** Parsed as YAML 1.1, as kubectl's parser reads it (yes/on/timestamps are not strings there unless quoted). */
function objectsOf(yamlText: string): Array<IJob | IConfigMap> {
  return parseAllDocuments(yamlText, { version: '1.1' }).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as IJob | IConfigMap;
  });
}

function jobsOf(yamlText: string): IJob[] {
  return objectsOf(yamlText).filter((o): o is IJob => o.kind === 'Job');
}

/** The run plan the manifest's ConfigMap carries (the first object), read as the pods read it. */
function planOf(yamlText: string): RunPlan {
  const map = objectsOf(yamlText)[0] as IConfigMap;
  expect(map.kind).toBe('ConfigMap');
  new ConfigMap(map).validate();
  return parseRunPlan(map.data?.['plan.json'] ?? '', 'plan.json');
}

/** Validates against the Job schema, and the pod template against the Pod schema. */
function validate(job: IJob): void {
  new Job(job).validate();
  const template = job.spec?.template;
  new Pod({ metadata: { name: 'shard', ...template?.metadata }, spec: template?.spec }).validate();
}

function container(job: IJob) {
  const c = job.spec?.template.spec?.containers[0];
  if (!c) throw new Error('no container');
  return c;
}

describe('inferbench k8s: an Indexed Job manifest for sharded load generation', () => {
  const pods = { pods: '3', image: 'ghcr.io/you/inferbench:0.1' };

  it('with --pvc: the load Job and a suspended merge Job, both valid by the Kubernetes schema', () => {
    const { stdout } = generate({ ...pods, pvc: 'bench-results' });
    const [load, merge, ...rest] = jobsOf(stdout);
    expect(rest).toEqual([]);
    if (!load || !merge) throw new Error('two Jobs expected');
    validate(load);
    validate(merge);

    // The run is named after its start (now + 120 s, rounded up to the second).
    expect(load.metadata?.name).toBe('inferbench-20261124-093001');
    expect(load.spec).toMatchObject({ completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimit: 0 });
    expect(load.spec?.template.spec?.restartPolicy).toBe('Never');
    const c = container(load);
    expect(c.command).toEqual(['inferbench']);
    // Pods run the plan (the run flags resolved once, in the ConfigMap) with their own shard index and folder.
    const args = (c.args ?? []).join(' ');
    expect(args).toBe('run --plan /etc/inferbench/plan.json --shard $(JOB_COMPLETION_INDEX)/3 --out /results/20261124-093001/shard-$(JOB_COMPLETION_INDEX)');
    const plan = planOf(stdout);
    expect(plan.target).toEqual({ url: 'http://vllm.bench.svc:8000', api: 'auto' });
    expect(plan.load).toMatchObject({ profile: 'constant', rates: [30], plannedRows: 1 });
    expect(plan.window.maxSeconds).toBe(60);
    expect(plan.distribution).toMatchObject({ shardCount: 3, startAt: Date.parse('2026-11-24T09:30:01Z'), barrier: '/results/20261124-093001/barrier' });
    expect(c.volumeMounts).toContainEqual({ name: 'plan', mountPath: '/etc/inferbench', readOnly: true });
    expect(c.env).toContainEqual({
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: { fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } },
    });
    expect(c.resources).toEqual({ requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } });
    expect(load.spec?.template.spec?.volumes).toEqual([
      { name: 'results', persistentVolumeClaim: { claimName: 'bench-results' } },
      { name: 'plan', configMap: { name: 'inferbench-20261124-093001-plan' } },
    ]);

    expect(merge.metadata?.name).toBe('inferbench-20261124-093001-merge');
    expect(merge.spec?.suspend).toBe(true);
    expect(container(merge).args).toEqual([
      'merge',
      '/results/20261124-093001/shard-0',
      '/results/20261124-093001/shard-1',
      '/results/20261124-093001/shard-2',
      '--out',
      '/results/20261124-093001/merged',
    ]);
    // The steps: apply, wait for the load Job, resume the merge Job; and the clock assumption.
    expect(stdout).toContain('kubectl wait --for=condition=complete job/inferbench-20261124-093001 --timeout=24h');
    expect(stdout).toContain(`kubectl patch job/inferbench-20261124-093001-merge --type=merge -p '{"spec":{"suspend":false}}'`);
    expect(stdout).toMatch(/NTP-synced/);
  });

  it('without --pvc: an emptyDir, the pod kept up for kubectl cp, the copy and merge steps in comments', () => {
    const { stdout } = generate({ ...pods, name: 'qwen-h100', keepSeconds: '15m', cpu: '4', memory: '8Gi', namespace: 'bench', startAt: '2026-11-24T12:00:00+02:00' });
    const [load, ...rest] = jobsOf(stdout);
    expect(rest).toEqual([]);
    if (!load) throw new Error('a Job expected');
    validate(load);
    expect(load.metadata).toMatchObject({ name: 'inferbench-qwen-h100', namespace: 'bench' });
    expect(load.spec?.template.spec?.volumes).toEqual([{ name: 'results', emptyDir: {} }, { name: 'plan', configMap: { name: 'inferbench-qwen-h100-plan' } }]);
    const c = container(load);
    expect(c.command?.slice(0, 2)).toEqual(['sh', '-c']);
    expect(c.command?.[2]).toContain('sleep 900');
    // --start-at in any zone is the same instant in the plan (epoch ms); no claim, no barrier.
    expect(planOf(stdout).distribution).toMatchObject({ shardCount: 3, startAt: Date.parse('2026-11-24T10:00:00Z') });
    expect(planOf(stdout).distribution.barrier).toBeUndefined();
    expect(stdout).toContain('every shard sends its first row at 2026-11-24T10:00:00Z (UTC)');
    expect(c.resources?.limits).toEqual({ cpu: '4', memory: '8Gi' });
    expect(stdout).toContain('Recommended instead: --pvc CLAIM');
    expect(stdout).toContain("kubectl -n bench get pods -l job-name=inferbench-qwen-h100,batch.kubernetes.io/job-completion-index=$i");
    expect(stdout).toContain('inferbench merge qwen-h100/shard-0 qwen-h100/shard-1 qwen-h100/shard-2 --out qwen-h100/merged');
  });

  it('the schema check is real: a broken Job fails it', () => {
    const [load] = jobsOf(generate({ ...pods, pvc: 'r' }).stdout);
    if (!load?.spec) throw new Error('no Job');
    expect(() => validate({ ...load, spec: { ...load.spec, completionMode: 'Bogus' } } as unknown as IJob)).toThrow(/completionMode/);
    expect(() => validate({ ...load, spec: { ...load.spec, parallelism: 'x' } } as unknown as IJob)).toThrow(/parallelism/);
    const noImage = { ...load.spec.template, spec: { ...load.spec.template.spec, restartPolicy: 'Sometimes' } };
    expect(() => validate({ ...load, spec: { ...load.spec, template: noImage } } as IJob)).toThrow(/restartPolicy/);
  });

  it('--format json prints a v1 List of the same objects, and the steps on stderr', () => {
    const yaml = generate({ ...pods, pvc: 'r' });
    const json = generate({ ...pods, pvc: 'r', format: 'json' });
    const list = JSON.parse(json.stdout) as { apiVersion: string; kind: string; items: IJob[] };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items).toEqual(objectsOf(yaml.stdout));
    expect(json.stderr).toContain('kubectl wait --for=condition=complete');
  });

  it('carries the run flags in the plan verbatim: ConfigMap data is not expanded, so a $ stays one $', () => {
    const { stdout } = generate(pods, [...RUN, '--extra-body', '{"x":"$(HOME) $$ $y"}', '--label', 'yes']);
    const plan = planOf(stdout);
    expect(plan.request.extraBody).toEqual({ x: '$(HOME) $$ $y' });
    // Read as YAML 1.1 (kubectl), "yes" stays a string.
    expect(plan.metadata.label).toBe('yes');
  });

  it('no --target: allowed, each pod runs its own simulator, and says so', () => {
    const { stdout, stderr } = generate(pods, ['--profile', 'concurrent', '--concurrency', '4']);
    expect(stderr).toContain('note: no --target: each of the 3 pods measures its own built-in simulated engine');
    expect(stdout).toContain('No --target: each pod measures its own built-in simulated engine');
    validate(jobsOf(stdout)[0] as IJob);
  });

  it('user mistakes: one line each, naming the flag and what to do', () => {
    const cases: Array<[Flags, readonly string[], RegExp]> = [
      [{ image: 'i' }, RUN, /--pods is required/],
      [{ pods: '0', image: 'i' }, RUN, /--pods "0" is not a whole number from 1/],
      [{ pods: '2.5', image: 'i' }, RUN, /--pods "2.5"/],
      [{ pods: '2' }, RUN, /--image is required/],
      [{ ...pods, cpu: 'lots' }, RUN, /--cpu "lots" is not a CPU quantity/],
      [{ ...pods, memory: '2048' }, RUN, /--memory "2048" .* with a unit/],
      [{ ...pods, name: 'My_Run' }, RUN, /--name "My_Run"/],
      [{ ...pods, format: 'md' }, RUN, /--format "md": the manifest is yaml or json/],
      [{ ...pods, pvc: 'r', keepSeconds: '60' }, RUN, /--keep-seconds .* with --pvc/],
      [{ ...pods, startAt: '2020-01-01T00:00:00Z' }, RUN, /--start-at 2020-01-01T00:00:00Z is in the past/],
      [{ ...pods, startAt: 'tomorrow' }, RUN, /--start-at "tomorrow" is not an ISO-8601 instant/],
      [{ ...pods, startAt: '2026-11-24T12:00:00' }, RUN, /is not an ISO-8601 instant with a zone/],
      [{ ...pods, startAt: '2026-11-24T12:00:00Z', startDelay: '30' }, RUN, /--start-at and --start-delay/],
      [{ ...pods, apiKeySecret: 'a:b:c' }, RUN, /--api-key-secret "a:b:c"/],
      [pods, ['--target', 'http://vllm:8000'], /--profile sweep \(run's default\) cannot be split across shards/],
      [pods, ['--target', 'http://vllm:8000', '--profile', 'capacity', '--slo', 'ttft:500'], /--profile capacity cannot be split/],
      [pods, [...RUN, '--out', 'x'], /run flag --out: the manifest gives each shard its own --out/],
      [pods, [...RUN, '--shard=0/2'], /run flag --shard/],
      [pods, [...RUN, '--start-at', '2026-11-24T12:00:00Z'], /--start-at is a k8s flag/],
      [pods, [...RUN, '--ui'], /run flag --ui/],
      [pods, [...RUN, '--plan', 'p.json'], /run flag --plan/],
      [pods, [...RUN, '--dry-run'], /run flag --dry-run/],
      [pods, [...RUN, '--api-key', 'sk-1'], /--api-key-secret/],
      [pods, [...RUN, '--pvc', 'r'], /--pvc is a k8s flag, not a run flag/],
      [pods, [...RUN, '--records', 'none'], /--shard needs --records full/],
      [pods, [...RUN, '--bogus'], /run flags: unknown option '--bogus'/],
      [pods, ['--target', 'http://127.0.0.1:8000', '--rate', '5'], /is the pod itself inside Kubernetes/],
      [pods, ['--target', 'http://vllm:8000', '--rate', 'fast'], /--rate/],
    ];
    for (const [flags, runArgs, expected] of cases) {
      const message = problemOf(flags, runArgs);
      expect(message, JSON.stringify([flags, runArgs])).toMatch(expected);
      expect(message).not.toContain('\n');
    }
  });

  it('the help example generates a valid manifest', () => {
    const examples = EXAMPLES['k8s'] ?? [];
    expect(examples.length).toBeGreaterThan(0);
    for (const e of examples) for (const job of jobsOf(generateFromLine(e.command).stdout)) validate(job);
  });

  it("docs/scaling-out.md shows the command's real output", () => {
    const doc = readFileSync(join(repoRoot, 'docs/scaling-out.md'), 'utf8');
    const m = /This is the output of\n\n```sh\n([\s\S]*?)\n```\n\n```yaml\n([\s\S]*?)\n```/.exec(doc);
    if (!m) throw new Error('no command and manifest in docs/scaling-out.md');
    const line = (m[1] as string).replace(/\\\n\s*/g, '');
    expect(generateFromLine(line).stdout.trimEnd()).toBe(m[2]);
  });

  it('CLI: run flags after --, or straight after the k8s flags; a mistake exits 2 with one line', async () => {
    const withDashes = await runCli(['k8s', '--pods', '2', '--image', 'img:1', '--pvc', 'r', '--', ...RUN]);
    expect(withDashes.stderr).toBe('');
    expect(withDashes.code).toBe(0);
    const plain = await runCli(['k8s', '--pods', '2', '--image', 'img:1', '--pvc', 'r', '--format', 'json', ...RUN]);
    expect(plain.code).toBe(0);
    const list = JSON.parse(plain.stdout) as { items: Array<IJob | IConfigMap> };
    const jobs = list.items.filter((o): o is IJob => o.kind === 'Job');
    for (const job of jobs) validate(job);
    expect((container(jobs[0] as IJob).args ?? []).slice(0, 3)).toEqual(['run', '--plan', '/etc/inferbench/plan.json']);
    const plan = parseRunPlan((list.items[0] as IConfigMap).data?.['plan.json'] ?? '', 'plan.json');
    expect(plan.load.rates).toEqual([30]);

    const bad = await runCli(['k8s', '--pods', '2', '--image', 'img:1', '--', '--target', 'http://vllm:8000', '--profile', 'sweep']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^error: --profile sweep cannot be split across shards/);
  });
});
