/** What the built-in simulator models when no flag says otherwise: declared in sim/ (config's flag table reads it too). */
export { DEFAULT_SIM } from '../sim/default-sim.js';
