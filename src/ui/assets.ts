import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { vegaRuntimePath } from '../report/charts/render.js';
import { INDEX_HTML, STYLE_CSS } from './page-shell.js';

export interface Asset {
  type: string;
  body: string | Buffer;
}

const JS = 'text/javascript; charset=utf-8';

function vegaLiteRuntimePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('vega-lite')), 'vega-lite.min.js');
}

/** Running from source (tsx: tests, development) rather than from dist/ (npm install, `npm run build`). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const CLIENT_DIR = fileURLToPath(new URL('./client/', import.meta.url));

const transpiled = new Map<string, { mtime: number; code: string }>();

/**
 * A browser module of the dashboard. Built installs serve dist/ui/client/*.js, compiled by `npm run build`
 * (the `prepare` script); from source the .ts file is transpiled on first request with the TypeScript compiler
 * (a dev dependency there), so tests always serve the code as it is now.
 */
async function clientModule(name: string): Promise<Asset | undefined> {
  if (!FROM_SOURCE) {
    const file = join(CLIENT_DIR, `${name}.js`);
    return existsSync(file) ? { type: JS, body: readFileSync(file) } : undefined;
  }
  const file = join(CLIENT_DIR, `${name}.ts`);
  if (!existsSync(file)) return undefined;
  const mtime = statSync(file).mtimeMs;
  const hit = transpiled.get(name);
  if (hit && hit.mtime === mtime) return { type: JS, body: hit.code };
  const ts = (await import('typescript')).default;
  const out = ts.transpileModule(readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: file,
  });
  transpiled.set(name, { mtime, code: out.outputText });
  return { type: JS, body: out.outputText };
}

const fixed = new Map<string, () => Asset>([
  ['/', () => ({ type: 'text/html; charset=utf-8', body: INDEX_HTML })],
  ['/assets/style.css', () => ({ type: 'text/css; charset=utf-8', body: STYLE_CSS })],
  // The vega and vega-lite runtimes the project already uses for its charts, straight from node_modules.
  ['/assets/vega.min.js', () => ({ type: JS, body: readFileSync(vegaRuntimePath()) })],
  ['/assets/vega-lite.min.js', () => ({ type: JS, body: readFileSync(vegaLiteRuntimePath()) })],
]);
const cache = new Map<string, Asset>();

/** The asset at a URL path, or undefined (404). Only fixed names and [a-z-] module names: no path ever reaches the disk. */
export async function assetFor(path: string): Promise<Asset | undefined> {
  const make = fixed.get(path);
  if (make) {
    const hit = cache.get(path) ?? make();
    cache.set(path, hit);
    return hit;
  }
  const m = /^\/assets\/app\/([a-z][a-z0-9-]*)\.js$/.exec(path);
  return m ? clientModule(m[1] as string) : undefined;
}

/** Checked at start-up: a build without the compiled browser code says so in one line. */
export function clientBuilt(): boolean {
  return FROM_SOURCE || existsSync(join(CLIENT_DIR, 'main.js'));
}
