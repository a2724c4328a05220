import { VirtualClock } from '../../core/virtual-clock.js';
import type { SimDriver } from './driver.js';

/** Fast-forward time for the engine: the virtual clock (core/virtual-clock.ts), under the name the engine's tests use. */
export class VirtualDriver extends VirtualClock implements SimDriver {}
