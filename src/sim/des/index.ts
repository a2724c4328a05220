export type { SimDriver } from './driver.js';
export { EventHeap } from './heap.js';
export { VirtualDriver } from './virtual-driver.js';
export { type PacingStats, RealTimeDriver, type RealTimeDriverOptions } from './real-time-driver.js';
