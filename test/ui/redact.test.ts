import { describe, expect, it } from 'vitest';
import { isSecretKey, REDACTED, redactArgv, redactJson, shellJoin } from '../../src/ui/redact.js';

describe('secrets never reach the dashboard', () => {
  it('knows secret keys from token counts and tokenizers', () => {
    for (const k of ['apiKey', 'api_key', 'api-key', 'hfToken', 'token', 'Authorization', 'password', 'clientSecret']) expect(isSecretKey(k), k).toBe(true);
    for (const k of ['outputTokens', 'promptTokens', 'tokenizer', 'maxTokens', 'model', 'keepAlive']) expect(isSecretKey(k), k).toBe(false);
  });

  it('redacts values of secret flags in argv, in both spellings, and passwords in URLs', () => {
    expect(redactArgv(['run', '--api-key', 'sk-1', '--target', 'http://u:pw@127.0.0.1:8000', '--api-key=sk-2', '--output-tokens', '64'])).toEqual([
      'run', '--api-key', REDACTED, '--target', `http://${REDACTED}@127.0.0.1:8000`, `--api-key=${REDACTED}`, '--output-tokens', '64',
    ]);
  });

  it('redacts manifest fields at any depth and keeps the rest', () => {
    const out = JSON.stringify(redactJson({ options: { apiKey: 'sk-1', outputTokens: 64, headers: { Authorization: 'Bearer sk-2' }, extra: 'Bearer sk-3' }, argv: ['--api-key', 'sk-4'] }));
    expect(out).not.toMatch(/sk-\d/);
    expect(out).toContain('"outputTokens":64');
  });

  it('quotes shell words that need it', () => {
    expect(shellJoin(['run', '--label', 'a b', "it's", REDACTED])).toBe(`run --label 'a b' 'it'\\''s' '<redacted>'`);
  });
});
