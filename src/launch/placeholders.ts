import { configError } from '../core/errors.js';

/**
 * `{key}` placeholders in a server command: `{port}`, `{name}` and every value a cell has. A placeholder the values do
 * not have is a mistake (a typo would otherwise start a server with a literal `{prot}` in its flags). `${VAR}` is the
 * shell's own and is left alone, as is `{}` and anything that is not a plain name.
 */
const PLACEHOLDER = /(\$?)\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

export function fillPlaceholders(template: string, values: Record<string, string | number>): string {
  return template.replace(PLACEHOLDER, (whole, dollar: string, key: string) => {
    if (dollar === '$') return whole;
    const value = values[key];
    if (value === undefined) {
      const known = Object.keys(values).map((k) => `{${k}}`).join(', ');
      throw configError(`unknown placeholder {${key}} in "${template}"`, `the placeholders here are ${known || 'none'}; add a value named ${key} (--vary ${key}=…) or fix the name`);
    }
    return String(value);
  });
}

/** The placeholder names a template uses, in order of first use (`${VAR}` excluded). */
export function placeholdersIn(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[2] as string;
    if (m[1] !== '$' && !names.includes(name)) names.push(name);
  }
  return names;
}
