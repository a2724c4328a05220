/** @module sim — simulated LLM engine: catalog, cost model, schedulers, drivers, virtual stage runner. */
export type * from './types.js';
export * from './catalog/index.js';
export { type BatchSummary, StepCostModel, type StepCostBreakdown } from './cost/step-cost.js';
export { BLOCK_TOKENS, type MemoryPlan, planMemory } from './cost/memory.js';
export { type SimDriver, EventHeap, VirtualDriver, RealTimeDriver, type RealTimeDriverOptions, type PacingStats } from './des/index.js';
export { Engine, type EngineConfig, SimRejectedError } from './engine/engine.js';
export { ENGINE_PROFILES, type EngineId, type EngineProfile, findEngineProfile, SIM_ENGINE_NAMES } from './engine/profiles.js';
export {
  type ResolvedSimEngine, type SimEngineDescription, type SimEngineOptions, createSimEngine, describeSimEngine,
  resolveSimEngine,
} from './create.js';
export { type VirtualRunnerOptions, type VirtualStageRunner, createVirtualStageRunner, runVirtualStage } from './virtual-runner.js';
export type { Calibration, EngineCal, HardwareCal, QuantCal } from './calibrate/types.js';
export { DEFAULT_CALIBRATION } from './calibrate/constants.js';
