/** @module sim/server — the simulated engine served over HTTP in each engine's wire format. */
export { startSimServer, type SimServer, type SimServerOptions, type SimTruth } from './server.js';
export { FAULT_KINDS, NO_FAULTS, decideFault, formatFaultSpec, parseFaultSpec, type FaultDecision, type FaultKind, type FaultSpec } from './faults.js';
export type { EmissionStats, TruthLimits, TruthOutcome, TruthRecord } from './truth.js';
export { DEFAULT_TRUTH_LIMITS } from './truth.js';
