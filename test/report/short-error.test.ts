import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHORT_ERROR_CHARS, shortError } from '../../src/core/short-error.js';
import { dialects } from '../../src/dialects/index.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { runCli } from '../helpers/cli.js';

const page = (title: string, body: string): string =>
  `<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <meta charset="utf-8">\n        <title>${title}</title>\n    </head>\n    <body>\n${body}\n    </body>\n</html>\n`;
/** Python's `http.server` error page, byte for byte in shape. */
const pythonError = page(
  'Error response',
  `        <h1>Error response</h1>\n        <p>Error code: 501</p>\n        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>\n        <p>Error code explanation: 501 - Server does not support this operation.</p>`,
);
const listing = page(
  'Directory listing for /',
  `<h1>Directory listing for /</h1>\n<hr>\n<ul>\n${Array.from({ length: 60 }, (_, i) => `<li><a href="model-${i}.safetensors">model-${i}.safetensors</a></li>`).join('\n')}\n</ul>\n<hr>`,
);

describe('shortError: one short line for a table cell', () => {
  it('an HTML page becomes its title and visible text; long text is cut with …; a traceback keeps its first line', () => {
    const s = shortError(`E_HTTP_STATUS: HTTP 501: ${pythonError}`);
    expect(s).toBe("E_HTTP_STATUS: HTTP 501: Error response — Error code: 501 Message: Unsupported method ('POST'). Err…");
    expect(s.length).toBe(SHORT_ERROR_CHARS);
    expect(shortError('Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: prompt')).toBe('Traceback (most recent call last):');
    expect(shortError('  short \t message  ')).toBe('short message');
  });

  it("a dialect's error message for an HTML body is the page's text, not its markup", () => {
    expect(dialects['openai-chat'].errorMessage(501, pythonError)).toBe(
      "Error response — Error code: 501 Message: Unsupported method ('POST'). Error code explanation: 501 - Server does not support this operation.",
    );
    expect(dialects.tgi.errorMessage(404, '{"error":"Model not found","error_type":"not_found"}')).toBe('Model not found');
  });
});

describe('a plain file server as --target: the failure reads as one short line (real HTTP, whole CLI)', () => {
  let server: Server;
  let url = '';
  const root = mkdtempSync(join(tmpdir(), 'ib-html-'));
  beforeAll(async () => {
    // GET serves a directory listing; POST /501/... answers like Python's http.server, any other POST gets the listing with 200.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = req.method === 'POST' && req.url?.startsWith('/501/') ? pythonError : listing;
        res.writeHead(body === pythonError ? 501 : 200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const run = (target: string, out: string, extra: string[] = []): ReturnType<typeof runCli> =>
    runCli(['run', '--target', target, '--api', 'openai-chat', '--model', 'm', '--profile', 'synchronous', '--max-requests', '3', '--prompt-tokens', '32', '--output-tokens', '4', '--out', out, '--no-progress', ...extra]);
  const failureLines = (text: string): string[] => text.split('\n').filter((l) => /all failed|not openai-chat responses/.test(l));

  it('HTTP 501 with an HTML page: the table shows its words in ≤ 100 characters; requests.jsonl keeps the full text', async () => {
    const out = join(root, 'http-501');
    const res = await run(`${url}/501`, out);
    const lines = failureLines(res.stdout + res.stderr);
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      expect(l).not.toMatch(/<\/?[a-z!]/i);
      expect(l.length).toBeLessThan(SHORT_ERROR_CHARS + 60);
    }
    expect(lines.join('\n')).toContain('HTTP 501: Error response — Error code: 501');
    const rec = JSON.parse(readFileSync(join(out, 'requests.jsonl'), 'utf8').split('\n')[0] ?? '{}') as RequestRecord;
    expect(rec.error?.message).toContain('Error code explanation: 501 - Server does not support this operation.');
  });

  it('HTTP 200 with the whole page, streamed or not: "an HTML page" by its title, never the markup', async () => {
    for (const extra of [[], ['--no-stream']]) {
      const res = await run(url, join(root, `html-200${extra.join('')}`), extra);
      expect(res.code).toBe(1);
      const lines = failureLines(res.stdout + res.stderr);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) {
        expect(l).toMatch(/HTML page/);
        expect(l).toContain('Directory listing for /');
        expect(l).not.toMatch(/<\/?[a-z!]/i);
        expect(l.length).toBeLessThan(SHORT_ERROR_CHARS + 120);
      }
    }
  });
});
