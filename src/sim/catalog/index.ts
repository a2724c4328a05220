export type { HardwareSpec, LinkKind, ModelDerived, ModelSpec, MoeSpec, QuantName, QuantSpec } from './types.js';
export { BUILTIN_MODELS, deriveModel, kvBytesPerTokenPerGpu } from './models.js';
export { BUILTIN_HARDWARE, LINK_PRIORS, QUANTS, QUANT_NAMES, parseQuant } from './hardware.js';
export {
  type ResolvedModel, catalogKey, findHardware, findModel, findQuant, listHardware, listModels,
  registerHardware, registerModel,
} from './registry.js';
export { type LoadedCatalog, loadCatalogFile, modelFromHfConfig, parseCatalogJson } from './load-file.js';
