/** `inferbench gate`: whether a candidate's runs regressed against a baseline's, per metric and row, beyond noise. */
export { gateRuns, checkComparable, type GateOptions, type GateReport } from './gate.js';
export { type GateCheck, type GateVerdict } from './decide.js';
export { parseMaxRegression, thresholdsOrThrow, DEFAULT_MAX_REGRESSION, type Threshold } from './thresholds.js';
export { renderGateJunit, renderGateMarkdown, renderGateText, verdictLine } from './render.js';
