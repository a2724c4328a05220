// The version lives in core/ so every folder can print it (src/layers.ts); kept here for existing imports.
export { toolVersion } from '../core/version.js';
