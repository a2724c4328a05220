/** `inferbench k8s`'s own flags, checked and turned into a ShardJobSpec. Each mistake is one line (exit 2). */
import { configError } from '../core/errors.js';
import { parseDuration, type Problems } from '../config/parse.js';
import type { ShardJobSpec } from './manifest.js';

export const K8S_DEFAULTS = { cpu: '2', memory: '2Gi', keepSeconds: '600', startDelay: '120', format: 'yaml' } as const;
export const MANIFEST_FORMATS = ['yaml', 'json'] as const;
export type ManifestFormat = (typeof MANIFEST_FORMATS)[number];
/** Kubernetes' limit on completions of an Indexed Job. */
const MAX_PODS = 100_000;
/** `inferbench-<name>-merge` must stay a 63-character DNS label. */
const MAX_NAME = 40;

/** The flags as commander hands them over (strings), and which ones the user typed. */
export interface RawK8sFlags {
  pods?: string;
  image?: string;
  name?: string;
  namespace?: string;
  pvc?: string;
  keepSeconds?: string;
  cpu?: string;
  memory?: string;
  startAt?: string;
  startDelay?: string;
  apiKeySecret?: string;
  format?: string;
  explicit: (flag: keyof Omit<RawK8sFlags, 'explicit'>) => boolean;
}

export interface K8sOptions {
  /** Everything but the plan, which comes from the run flags (src/cli/k8s-command.ts). */
  spec: Omit<ShardJobSpec, 'plan'>;
  format: ManifestFormat;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const CPU = /^(\d+(\.\d+)?|\.\d+)m?$/;
const MEMORY = /^(\d+(\.\d+)?|\.\d+)(k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

export function resolveK8sOptions(raw: RawK8sFlags, now: Date): K8sOptions {
  const p: Problems = [];
  const pods = parsePods(raw.pods, p);
  const image = raw.image?.trim() ?? '';
  if (raw.image === undefined) p.push('--image is required: the container image with inferbench on its PATH, e.g. --image ghcr.io/you/inferbench:0.1');
  else if (image === '' || /\s/.test(image)) p.push(`--image ${JSON.stringify(raw.image)} is not an image reference; write it like --image ghcr.io/you/inferbench:0.1`);

  const format = (raw.format ?? K8S_DEFAULTS.format) as ManifestFormat;
  if (!MANIFEST_FORMATS.includes(format)) {
    p.push(`--format ${JSON.stringify(raw.format)}: the manifest is yaml or json; run's own --format goes with the run flags, after --`);
  }
  const cpu = raw.cpu ?? K8S_DEFAULTS.cpu;
  if (!CPU.test(cpu) || !(parseFloat(cpu) > 0)) p.push(`--cpu ${JSON.stringify(cpu)} is not a CPU quantity; write cores (2, 0.5) or millicores (500m)`);
  const memory = raw.memory ?? K8S_DEFAULTS.memory;
  if (!MEMORY.test(memory) || !(parseFloat(memory) > 0)) p.push(`--memory ${JSON.stringify(memory)} is not a memory quantity with a unit; write it like 2Gi or 512Mi`);

  const pvc = raw.pvc;
  if (pvc !== undefined && (!DNS_SUBDOMAIN.test(pvc) || pvc.length > 253)) p.push(`--pvc ${JSON.stringify(pvc)} is not a claim name (lowercase letters, digits, '-' and '.')`);
  if (pvc !== undefined && raw.explicit('keepSeconds')) {
    p.push('--keep-seconds keeps emptyDir pods up for kubectl cp; with --pvc the results outlive the pods: leave it out');
  }
  const keepSeconds = parseDuration('--keep-seconds', raw.keepSeconds ?? K8S_DEFAULTS.keepSeconds, p, { min: 1 });

  const startAt = resolveStartAt(raw, now, p);
  const name = raw.name ?? (startAt !== undefined ? defaultName(startAt) : 'run');
  if (!DNS_LABEL.test(name) || name.length > MAX_NAME) {
    p.push(`--name ${JSON.stringify(name)}: at most ${MAX_NAME} lowercase letters, digits and '-', starting and ending with a letter or digit`);
  }
  const namespace = raw.namespace;
  if (namespace !== undefined && (!DNS_LABEL.test(namespace) || namespace.length > 63)) p.push(`--namespace ${JSON.stringify(namespace)} is not a namespace name`);
  const apiKeySecret = parseSecretRef(raw.apiKeySecret, p);

  if (p.length > 0) throw configError(p.length === 1 ? (p[0] as string) : `${p.length} problems: ${p.join('; ')}`, 'see inferbench k8s --help');
  return {
    format,
    spec: {
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      pods: pods as number,
      image,
      startAt: startAt as string,
      cpu,
      memory,
      ...(pvc !== undefined ? { pvc } : {}),
      keepSeconds: Math.ceil(keepSeconds as number),
      ...(apiKeySecret !== undefined ? { apiKeySecret } : {}),
    },
  };
}

function parsePods(raw: string | undefined, p: Problems): number | undefined {
  if (raw === undefined) {
    p.push('--pods is required: how many pods (shards) share the load, e.g. --pods 3');
    return undefined;
  }
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(n) || n < 1 || n > MAX_PODS) {
    p.push(`--pods ${JSON.stringify(raw)} is not a whole number from 1 to ${MAX_PODS}`);
    return undefined;
  }
  return n;
}

/** --start-at as given (any ISO-8601 instant with a zone, in the future), else now + --start-delay, whole seconds. */
function resolveStartAt(raw: RawK8sFlags, now: Date, p: Problems): string | undefined {
  if (raw.startAt !== undefined) {
    if (raw.explicit('startDelay')) {
      p.push('--start-at and --start-delay both set the start; give one of them');
      return undefined;
    }
    const at = ISO_INSTANT.test(raw.startAt.trim()) ? new Date(raw.startAt.trim()) : undefined;
    if (at === undefined || Number.isNaN(at.getTime())) {
      p.push(`--start-at ${JSON.stringify(raw.startAt)} is not an ISO-8601 instant with a zone; write it like 2026-11-24T09:30:00Z`);
      return undefined;
    }
    if (at.getTime() <= now.getTime()) {
      p.push(`--start-at ${raw.startAt} is in the past; give a later instant, or leave it out for now + --start-delay`);
      return undefined;
    }
    return isoSeconds(at);
  }
  const delay = parseDuration('--start-delay', raw.startDelay ?? K8S_DEFAULTS.startDelay, p, { min: 0 });
  if (delay === undefined) return undefined;
  return isoSeconds(new Date(Math.ceil((now.getTime() + delay * 1000) / 1000) * 1000));
}

/** UTC, without milliseconds when they are zero: 2026-11-24T09:30:00Z. */
function isoSeconds(at: Date): string {
  return at.toISOString().replace(/\.000Z$/, 'Z');
}

/** The start instant as a name: 2026-11-24T09:30:00Z → 20261124-093000. */
function defaultName(startAt: string): string {
  const d = startAt.replace(/[-:]/g, '');
  return `${d.slice(0, 8)}-${d.slice(9, 15)}`;
}

function parseSecretRef(raw: string | undefined, p: Problems): { name: string; key: string } | undefined {
  if (raw === undefined) return undefined;
  const [name = '', key = 'OPENAI_API_KEY', ...rest] = raw.split(':');
  if (rest.length > 0 || !DNS_SUBDOMAIN.test(name) || !/^[-._a-zA-Z0-9]+$/.test(key)) {
    p.push(`--api-key-secret ${JSON.stringify(raw)}: write a Secret's name, optionally with its key: NAME or NAME:KEY (key default: OPENAI_API_KEY)`);
    return undefined;
  }
  return { name, key };
}
