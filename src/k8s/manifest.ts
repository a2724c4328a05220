/**
 * `inferbench k8s`: the Kubernetes objects of a sharded run. A ConfigMap holds the run's plan (src/runplan/); one
 * Indexed Job runs the N shards of it (`run --plan /etc/inferbench/plan.json --shard I/N`), each pod writing its
 * run folder under /results; with a shared claim (--pvc) a second, suspended Job merges the shard folders once
 * the first has completed.
 *
 * Typed with kubernetes-models' interfaces (types only, erased at build: nothing of it is loaded at run time),
 * so a misspelt field is a compile error; test/k8s-manifest.test.ts validates the objects against the
 * Kubernetes OpenAPI schema.
 */
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IConfigMap, IContainer, IEnvVar, IPodSpec, IVolume } from 'kubernetes-models/v1';

/** Everything the manifest depends on, already validated (src/k8s/options.ts). */
export interface ShardJobSpec {
  /** The run's name: the Job is `inferbench-<name>`, the results go under /results/<name>/. */
  name: string;
  namespace?: string;
  pods: number;
  image: string;
  /** The run plan every shard runs, as JSON text (its start instant, shard count and barrier included). */
  plan: string;
  /** ISO-8601 UTC instant every shard starts its first row at. */
  startAt: string;
  cpu: string;
  memory: string;
  /** A ReadWriteMany claim all pods share; without it each pod keeps its results in an emptyDir. */
  pvc?: string;
  /** emptyDir form: how long a pod stays up after its run so its results can be copied out. */
  keepSeconds: number;
  /** Secret (and key) exposed to the pods as OPENAI_API_KEY, which `run` reads when --api-key is not given. */
  apiKeySecret?: { name: string; key: string };
}

export interface ShardManifests {
  /** The run plan, mounted into every pod of `load`. */
  plan: IConfigMap;
  /** The Indexed Job of the N shards. */
  load: IJob;
  /** With --pvc: the merge Job, created suspended; resumed once `load` has completed. */
  merge?: IJob;
}

export const RESULTS_MOUNT = '/results';
/** Where the plan's ConfigMap is mounted in a pod, and the plan file there. */
export const PLAN_MOUNT = '/etc/inferbench';
export const PLAN_FILE = `${PLAN_MOUNT}/plan.json`;
/** Kubernetes expands `$(VAR)` in args from the container's env; this one is set from the downward API below. */
export const INDEX_VAR = 'JOB_COMPLETION_INDEX';
const INDEX_REF = `$(${INDEX_VAR})`;
export const COMPONENT = { load: 'load-generator', merge: 'merge' } as const;
const COMPONENT_LABEL = 'app.kubernetes.io/component';

export function planConfigMapName(spec: Pick<ShardJobSpec, 'name'>): string {
  return `inferbench-${spec.name}-plan`;
}

export function loadJobName(spec: Pick<ShardJobSpec, 'name'>): string {
  return `inferbench-${spec.name}`;
}

export function mergeJobName(spec: Pick<ShardJobSpec, 'name'>): string {
  return `inferbench-${spec.name}-merge`;
}

/** The folder of one run under the results volume. */
export function runDir(spec: Pick<ShardJobSpec, 'name'>): string {
  return `${RESULTS_MOUNT}/${spec.name}`;
}

/** Where shard `index` (a number, or the `$(JOB_COMPLETION_INDEX)` reference) writes its run folder. */
export function shardDir(spec: Pick<ShardJobSpec, 'name'>, index: number | string): string {
  return `${runDir(spec)}/shard-${index}`;
}

export function buildShardManifests(spec: ShardJobSpec): ShardManifests {
  const plan = planConfigMap(spec);
  const load = loadJob(spec);
  return spec.pvc === undefined ? { plan, load } : { plan, load, merge: mergeJob(spec) };
}

/**
 * The argv after `inferbench`: the plan, and what differs between the pods: the shard index (Kubernetes puts the
 * pod's index where `$(JOB_COMPLETION_INDEX)` is) and the run folder. The start instant and the barrier are in
 * the plan.
 */
export function shardRunArgs(spec: ShardJobSpec): string[] {
  return ['run', '--plan', PLAN_FILE, '--shard', `${INDEX_REF}/${spec.pods}`, '--out', shardDir(spec, INDEX_REF)];
}

/** The barrier folder the plan names when the pods share a claim (--pvc): shards meet there before each row. */
export function barrierDir(spec: Pick<ShardJobSpec, 'name'>): string {
  return `${runDir(spec)}/barrier`;
}

/** ConfigMap data is not expanded by Kubernetes: the plan reaches the pods byte for byte. */
function planConfigMap(spec: ShardJobSpec): IConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(spec, planConfigMapName(spec), COMPONENT.load), data: { 'plan.json': spec.plan } };
}

/**
 * emptyDir form: the results die with the pod, so after the run the pod records the exit status beside its
 * folder (the copy step waits for that file) and stays up --keep-seconds for `kubectl cp`, then exits with the
 * run's status. The shell is PID 1, which gets SIGTERM when the Job is deleted: it passes it on to the run
 * (which then stops and keeps every finished request) and skips the wait. The script has no `$(` or `$$`,
 * which Kubernetes would expand; the run's argv arrives as "$@".
 */
export function keepAliveScript(spec: ShardJobSpec): string {
  const dir = runDir(spec);
  return [
    `mkdir -p ${dir}`,
    'inferbench "$@" &',
    'pid=$!',
    "trap 'kill -TERM \"$pid\" 2>/dev/null; stop=1' TERM INT",
    'wait "$pid"; code=$?',
    // A trapped signal ends `wait` early: wait again for the run's own exit status.
    'if [ -n "$stop" ]; then wait "$pid"; code=$?; fi',
    `echo "$code" > ${dir}/shard-"$${INDEX_VAR}".exit`,
    'if [ -z "$stop" ]; then',
    `  echo "inferbench: shard $${INDEX_VAR} exited $code; results kept ${spec.keepSeconds}s for kubectl cp"`,
    `  sleep ${spec.keepSeconds} & wait $!`,
    'fi',
    'exit "$code"',
  ].join('\n');
}

function labels(spec: ShardJobSpec, component: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'inferbench', 'app.kubernetes.io/instance': spec.name, [COMPONENT_LABEL]: component };
}

function metadata(spec: ShardJobSpec, name: string, component: string): NonNullable<IJob['metadata']> {
  return { name, ...(spec.namespace !== undefined ? { namespace: spec.namespace } : {}), labels: labels(spec, component) };
}

function resources(spec: ShardJobSpec): IContainer['resources'] {
  // Requests equal to limits: the Guaranteed QoS class, so a load generator is not squeezed by its neighbours
  // (and gets whole cores under the static CPU manager), which would show up as client-side latency.
  const amounts = { cpu: spec.cpu, memory: spec.memory };
  return { requests: { ...amounts }, limits: { ...amounts } };
}

function resultsVolume(spec: ShardJobSpec): IVolume {
  return spec.pvc !== undefined ? { name: 'results', persistentVolumeClaim: { claimName: spec.pvc } } : { name: 'results', emptyDir: {} };
}

function apiKeyEnv(spec: ShardJobSpec): IEnvVar[] {
  const s = spec.apiKeySecret;
  return s === undefined ? [] : [{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: s.name, key: s.key } } }];
}

function loadJob(spec: ShardJobSpec): IJob {
  const keepAlive = spec.pvc === undefined;
  const container: IContainer = {
    name: 'inferbench',
    image: spec.image,
    // The emptyDir form wraps the run in a shell that keeps the pod up afterwards (keepAliveScript).
    command: keepAlive ? ['sh', '-c', keepAliveScript(spec), 'inferbench'] : ['inferbench'],
    args: shardRunArgs(spec),
    env: [
      // Set explicitly from the annotation (every Kubernetes version with Indexed Jobs has it), not left to the
      // env var that newer versions add on their own.
      { name: INDEX_VAR, valueFrom: { fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } } },
      ...apiKeyEnv(spec),
    ],
    resources: resources(spec),
    volumeMounts: [
      { name: 'results', mountPath: RESULTS_MOUNT },
      { name: 'plan', mountPath: PLAN_MOUNT, readOnly: true },
    ],
  };
  const podLabels = labels(spec, COMPONENT.load);
  const podSpec: IPodSpec = {
    restartPolicy: 'Never',
    containers: [container],
    volumes: [resultsVolume(spec), { name: 'plan', configMap: { name: planConfigMapName(spec) } }],
    // Shards are meant to add client machines: spread them over nodes where the scheduler can.
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: podLabels } },
    ],
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(spec, loadJobName(spec), COMPONENT.load),
    spec: {
      completionMode: 'Indexed',
      completions: spec.pods,
      parallelism: spec.pods,
      // A retried shard would send its part of the schedule a second time: no retries.
      backoffLimit: 0,
      template: { metadata: { labels: podLabels }, spec: podSpec },
    },
  };
}

function mergeJob(spec: ShardJobSpec): IJob {
  const shards = Array.from({ length: spec.pods }, (_, i) => shardDir(spec, i));
  const container: IContainer = {
    name: 'merge',
    image: spec.image,
    command: ['inferbench'],
    args: ['merge', ...shards, '--out', `${runDir(spec)}/merged`],
    resources: resources(spec),
    volumeMounts: [{ name: 'results', mountPath: RESULTS_MOUNT }],
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(spec, mergeJobName(spec), COMPONENT.merge),
    spec: {
      // Kubernetes has no dependencies between Jobs: this one starts suspended and is resumed after the load
      // Job has completed, so applying the whole file at once cannot merge shards that are still running.
      suspend: true,
      completions: 1,
      parallelism: 1,
      backoffLimit: 0,
      template: { metadata: { labels: labels(spec, COMPONENT.merge) }, spec: { restartPolicy: 'Never', containers: [container], volumes: [resultsVolume(spec)] } },
    },
  };
}
