/** @module launch — inference servers as processes: start in a process group, wait ready, stop; free ports; placeholders. */
export {
  LaunchError,
  type LaunchStatus,
  type LaunchedServer,
  type ServerLaunchSpec,
  fillPlaceholders,
  formatMs,
  freePort,
  launchServer,
  logTail,
  placeholdersIn,
  portIsFree,
} from './server-process.js';
export type { ReadyAnswer } from './readiness.js';
