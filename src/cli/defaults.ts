// The default simulated engine lives in sim/ so config/ can read it without importing cli/ (src/layers.ts).
export { DEFAULT_SIM } from '../sim/default-engine.js';
