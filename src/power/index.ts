// GPU power: sources (DCGM exporter, nvidia-smi, trtllm-serve, any command, the target's own /metrics), the sampler a
// run observes, and the energy of a row's window.
export * from './source-spec.js';
export * from './samples.js';
export * from './integrate.js';
export * from './energy.js';
export * from './readings.js';
export * from './sampler.js';
export * from './replica-power.js';
