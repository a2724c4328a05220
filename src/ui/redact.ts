/** Secrets never reach the dashboard: api keys, tokens and passwords in manifests and command lines. */

export const REDACTED = '<redacted>';

/** "apiKey", "api_key", "hfToken", "Authorization", "password"… but not "outputTokens" or "tokenizer". */
export function isSecretKey(key: string): boolean {
  const snake = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/-/g, '_');
  return /(^|_)(api_?key|apikey|key|token|secret|password|passwd|authorization|auth|cookie|bearer|credentials?)$/.test(snake);
}

/** user:password@ in a URL, and "Bearer …" values. */
function redactText(value: string): string {
  return value.replace(/(\/\/)[^/@\s]+@/g, `$1${REDACTED}@`).replace(/\b(Bearer|Basic)\s+\S+/gi, `$1 ${REDACTED}`);
}

/** A copy of a JSON value with every secret-looking field's value replaced. */
export function redactJson(value: unknown, key = ''): unknown {
  if (key && isSecretKey(key) && value !== undefined && value !== null && value !== '' && typeof value !== 'boolean') return REDACTED;
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return key === 'argv' ? redactArgv(value.map(String)) : value.map((v) => redactJson(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactJson(v, k)]));
  }
  return value;
}

/** argv with the values of secret flags replaced: `--api-key X`, `--api-key=X`, and secrets inside URLs. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = /^(--?[A-Za-z0-9-]+)=(.*)$/.exec(arg);
    if (eq && isSecretKey((eq[1] as string).replace(/^-+/, ''))) {
      out.push(`${eq[1]}=${REDACTED}`);
    } else if (/^--?[A-Za-z]/.test(arg) && isSecretKey(arg.replace(/^-+/, '')) && i + 1 < argv.length) {
      out.push(arg, REDACTED);
      i++;
    } else {
      out.push(redactText(arg));
    }
  }
  return out;
}

/** A command line a shell reads back as the same words. */
export function shellJoin(words: readonly string[]): string {
  return words.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}
