/** @module core — clock, coded errors and seeded randomness; depends on nothing else in src/. */
export { type Clock, type Timer, realClock, sleepOn, sleepUntil } from './clock.js';
export { EventHeap } from './event-heap.js';
export { VirtualClock } from './virtual-clock.js';
export { type ErrorCode, InferbenchError, configError, isUserError } from './errors.js';
export { Rng } from './rng.js';
