/** `inferbench k8s`'s own flags (kept light: main.ts loads them for --help; the command loads when it runs). */
import type { Option } from 'commander';
import { opt } from './help-format.js';
import { K8S_DEFAULTS } from '../k8s/options.js';

const KUBERNETES = 'Kubernetes:';
const START = 'Shared start:';
// Its own heading, not GROUP.outputs: help sorts GROUP headings before others, and the Job's flags come first.
const RESULTS = 'Results and output:';

export function k8sFlags(): Option[] {
  return [
    opt(KUBERNETES, '--pods <n>', 'pods, one shard of the run each (required)'),
    opt(KUBERNETES, '--image <image>', 'container image with inferbench on its PATH (required)'),
    opt(KUBERNETES, '--name <name>', 'run name: the Job is inferbench-NAME, results go to /results/NAME', { shown: 'the start time, e.g. 20261124-093000' }),
    opt(KUBERNETES, '--namespace <ns>', 'namespace of the Jobs', { shown: "kubectl's current one" }),
    opt(KUBERNETES, '--cpu <q>', "each pod's CPU, requested and limit (Guaranteed QoS)", { value: K8S_DEFAULTS.cpu }),
    opt(KUBERNETES, '--memory <q>', "each pod's memory, requested and limit", { value: K8S_DEFAULTS.memory }),
    opt(KUBERNETES, '--api-key-secret <name[:key]>', 'Secret (and key) given to the pods as OPENAI_API_KEY', { shown: 'none; key: OPENAI_API_KEY' }),
    opt(START, '--start-at <time>', 'ISO-8601 instant every shard starts its first row at, e.g. 2026-11-24T09:30:00Z', { shown: 'now + --start-delay' }),
    opt(START, '--start-delay <time>', 'without --start-at: start this long from now (time to apply and pull the image)', { value: K8S_DEFAULTS.startDelay, shown: '120s' }),
    opt(RESULTS, '--pvc <claim>', 'ReadWriteMany claim the pods write their results to (recommended; adds a merge Job)', { shown: 'an emptyDir per pod' }),
    opt(RESULTS, '--keep-seconds <time>', 'without --pvc: keep each pod up this long after its run, for kubectl cp', { value: K8S_DEFAULTS.keepSeconds, shown: '600s' }),
    opt(RESULTS, '--format <format>', 'yaml | json (a v1 List)', { value: K8S_DEFAULTS.format }),
  ];
}
