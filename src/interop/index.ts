export { importSource, KNOWN_FORMATS } from './detect.js';
export { writeImportedRun, defaultLabel, type WriteImportOptions } from './write-run.js';
export { DEFINITIONS_NOTE, definitionLines, importedRunLine, importedSource } from './definitions.js';
export { SOURCE_TOOLS, type ImportedRun, type ImportedRecord, type SourceInfo, type SourceTool } from './types.js';
