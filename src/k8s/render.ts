/**
 * The manifest as text: YAML documents separated by `---`, with the steps to apply, wait, copy and merge as
 * comments on top; or `--format json`, a v1 List (the steps then go to stderr, JSON having no comments).
 */
import { Document } from 'yaml';
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IConfigMap } from 'kubernetes-models/v1';
import { type ShardJobSpec, type ShardManifests, PLAN_FILE, loadJobName, mergeJobName, planConfigMapName, runDir, shardDir } from './manifest.js';
import type { ManifestFormat } from './options.js';

export interface RenderedManifest {
  /** What goes to stdout: the manifest. */
  manifest: string;
  /** The steps as plain lines, for stderr where the manifest cannot carry them (json). */
  steps: string[];
}

/** What the steps say about the run besides the spec. */
export interface RunFacts {
  /** Undefined: each pod runs its own built-in simulated engine. */
  target: string | undefined;
}

export function renderManifests(spec: ShardJobSpec, manifests: ShardManifests, format: ManifestFormat, facts: RunFacts): RenderedManifest {
  const steps = howTo(spec, facts);
  if (format === 'json') {
    const list = { apiVersion: 'v1', kind: 'List', items: objects(manifests) };
    return { manifest: `${JSON.stringify(list, null, 2)}\n`, steps };
  }
  const docs = objects(manifests).map((obj, i) => {
    // YAML 1.1 quoting: kubectl's parser reads yes/on/2026-11-24T… unquoted as booleans and timestamps.
    const doc = new Document(obj, { version: '1.1', aliasDuplicateObjects: false });
    if (i === 0) doc.commentBefore = steps.map((line) => (line === '' ? '' : ` ${line}`)).join('\n');
    if (obj === manifests.merge) doc.commentBefore = mergeComment(spec).map((line) => ` ${line}`).join('\n');
    return doc.toString({ lineWidth: 0 });
  });
  return { manifest: docs.join('---\n'), steps };
}

function objects(m: ShardManifests): Array<IJob | IConfigMap> {
  return m.merge !== undefined ? [m.plan, m.load, m.merge] : [m.plan, m.load];
}

function kubectl(spec: ShardJobSpec): string {
  return spec.namespace !== undefined ? `kubectl -n ${spec.namespace}` : 'kubectl';
}

/** The header: what this is, the clock assumption, then the numbered steps for the chosen results volume. */
export function howTo(spec: ShardJobSpec, facts: RunFacts): string[] {
  const job = loadJobName(spec);
  const k = kubectl(spec);
  const fetchPod = `${job}-fetch`;
  const lines = [
    `inferbench k8s: run "${spec.name}" as ${spec.pods} shards, the Indexed Job ${job}.`,
    `Each pod runs: inferbench run --plan ${PLAN_FILE} --shard I/${spec.pods} --out ${shardDir(spec, 'I')}`,
    `(the run's plan, from the ConfigMap ${planConfigMapName(spec)}: the run flags resolved once, here; each pod probes the target itself).`,
    facts.target !== undefined
      ? `Target: ${facts.target} (every pod must reach it).`
      : 'No --target: each pod measures its own built-in simulated engine (N separate simulators, not one server).',
    `Start: every shard sends its first row at ${spec.startAt} (UTC). Apply before then; a pod that starts later`,
    'begins late and its run folder says by how much. Past that instant, generate the manifest again.',
    'Clock: the shards share that start only as well as the nodes share the time. Keep the nodes NTP-synced',
    '(within a few ms); each shard records its measured start offset in its run folder.',
    '',
  ];
  const wait = `${k} wait --for=condition=complete job/${job} --timeout=24h`;
  const failed = `   A failed shard fails the Job (backoffLimit 0: a retried shard would send its load twice): ${k} logs -l job-name=${job}`;
  if (spec.pvc !== undefined) {
    const merge = mergeJobName(spec);
    return [
      ...lines,
      `Results: claim ${spec.pvc} (ReadWriteMany), ${runDir(spec)}/shard-0 … shard-${spec.pods - 1}, merged into ${runDir(spec)}/merged.`,
      `1. Apply:  inferbench k8s … > ${spec.name}.yaml && ${k} apply -f ${spec.name}.yaml`,
      `2. Wait:   ${wait}`,
      failed,
      `3. Merge (the Job ${merge} was created suspended; Kubernetes has no Job dependencies):`,
      `   ${k} patch job/${merge} --type=merge -p '{"spec":{"suspend":false}}'`,
      `   ${k} wait --for=condition=complete job/${merge} --timeout=1h`,
      `4. Copy the merged run here from a pod that mounts the claim, e.g.:`,
      `   ${k} run ${fetchPod} --image=${spec.image} --restart=Never --overrides='${fetchOverrides(spec)}'`,
      `   ${k} wait --for=condition=ready pod/${fetchPod} --timeout=5m && ${k} cp ${fetchPod}:${runDir(spec)}/merged ./${spec.name}-merged`,
      `   ${k} delete pod/${fetchPod}`,
    ];
  }
  const last = spec.pods - 1;
  const localShards = Array.from({ length: spec.pods }, (_, i) => `${spec.name}/shard-${i}`).join(' ');
  return [
    ...lines,
    `Results: each pod's emptyDir, deleted with the pod: the pod stays up ${spec.keepSeconds}s after its run (--keep-seconds)`,
    'so its folder can be copied out (kubectl cp needs tar in the image; this form also needs sh).',
    'Recommended instead: --pvc CLAIM, a ReadWriteMany claim the pods share: results outlive the pods and a merge Job is included.',
    `1. Apply:  inferbench k8s … > ${spec.name}.yaml && ${k} apply -f ${spec.name}.yaml`,
    `2. Copy each shard's folder once its run has ended (Kubernetes 1.28+ labels pods with their index):`,
    `   mkdir -p ${spec.name}; for i in $(seq 0 ${last}); do`,
    `     pod=$(${k} get pods -l job-name=${job},batch.kubernetes.io/job-completion-index=$i -o jsonpath='{.items[0].metadata.name}')`,
    `     until code=$(${k} exec "$pod" -- cat ${runDir(spec)}/shard-$i.exit 2>/dev/null); do sleep 10; done`,
    `     echo "shard $i exited $code"; ${k} cp "$pod:${runDir(spec)}/shard-$i" "${spec.name}/shard-$i"`,
    '   done',
    `3. Merge here: inferbench merge ${localShards} --out ${spec.name}/merged`,
    `4. The Job completes once every pod's keep time is over: ${wait}`,
    failed,
  ];
}

function mergeComment(spec: ShardJobSpec): string[] {
  const k = kubectl(spec);
  return [
    `Merge Job: created suspended. Resume it only after ${loadJobName(spec)} has completed:`,
    `  ${k} wait --for=condition=complete job/${loadJobName(spec)} --timeout=24h && ${k} patch job/${mergeJobName(spec)} --type=merge -p '{"spec":{"suspend":false}}'`,
  ];
}

/** `kubectl run --overrides` for a pod that mounts the results claim and waits to be copied from. */
function fetchOverrides(spec: ShardJobSpec): string {
  const container = { name: 'fetch', image: spec.image, command: ['sleep', '3600'], volumeMounts: [{ name: 'results', mountPath: '/results' }] };
  return JSON.stringify({ spec: { containers: [container], volumes: [{ name: 'results', persistentVolumeClaim: { claimName: spec.pvc } }] } });
}
