/** @module core — clock, coded errors and seeded randomness; depends on nothing else in src/. */
export { type Clock, realClock, sleepUntil } from './clock.js';
export { type ErrorCode, InferbenchError, configError, isUserError } from './errors.js';
export { Rng } from './rng.js';
