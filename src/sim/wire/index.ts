/** @module sim/wire — byte-faithful response writers for each engine's HTTP API (pure, no I/O). */
import { llamacppWire } from './llamacpp.js';
import { lmdeployWire } from './lmdeploy.js';
import { ollamaWire } from './ollama.js';
import { sglangWire } from './sglang.js';
import { tgiWire } from './tgi.js';
import { tritonWire } from './triton.js';
import type { EngineWire, SimEngineKind } from './types.js';
import { vllmLegacyWire } from './vllm-legacy.js';
import { vllmWire } from './vllm.js';

export * from './types.js';
export { countChat, countPrompt, countTextTokens, fillerText, outputText, tokenText } from './filler.js';
export { goJson, pyDumps, sortedJson } from './json.js';

const WIRES: Record<SimEngineKind, EngineWire> = {
  vllm: vllmWire,
  'vllm-legacy': vllmLegacyWire,
  tgi: tgiWire,
  sglang: sglangWire,
  lmdeploy: lmdeployWire,
  llamacpp: llamacppWire,
  triton: tritonWire,
  ollama: ollamaWire,
};

export function wireFor(kind: SimEngineKind): EngineWire {
  return WIRES[kind];
}
