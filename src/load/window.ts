/**
 * The steady window of a row: its rules and constants (./window/rules.ts) and SteadyWindow, the composition of its
 * units (./window/steady-window.ts). The drivers, profiles and reports import from here.
 */
export * from './window/rules.js';
export { SteadyWindow } from './window/steady-window.js';
