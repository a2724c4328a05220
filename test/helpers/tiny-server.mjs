// A tiny OpenAI-compatible chat server started as its own process by launch/ and matrix tests:
//   node tiny-server.mjs PORT [MODE]
// MODE: ok (answers at once; streams 8 tokens when asked to stream) | never-ready (listens, answers 503 to everything)
//       | pidfile=FILE (ok, and writes its pid there) | crash-after=N (ok, and exits with code 3 on its Nth generation).
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';

const port = Number(process.argv[2]);
const mode = process.argv[3] ?? 'ok';
if (mode.startsWith('pidfile=')) writeFileSync(mode.slice(8), String(process.pid));
const crashAfter = mode.startsWith('crash-after=') ? Number(mode.slice(12)) : Infinity;
let generations = 0;
const reply = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    if (mode === 'never-ready') return reply(res, 503, { error: { message: 'loading model' } });
    if (req.method === 'GET' && req.url === '/v1/models') return reply(res, 200, { object: 'list', data: [{ id: 'tiny', object: 'model', owned_by: 'tiny' }] });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return reply(res, 404, { error: { message: `no route ${req.url}` } });
    if (++generations >= crashAfter) {
      console.error(`tiny-server: crashing on generation ${generations} as asked`);
      process.exit(3);
    }
    const body = JSON.parse(raw || '{}');
    if (!body.stream) {
      return reply(res, 200, { id: '1', object: 'chat.completion', model: 'tiny', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'length' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const n = Math.min(8, body.max_tokens ?? body.max_completion_tokens ?? 8);
    let i = 0;
    const tick = () => {
      if (i < n) {
        res.write(`data: ${JSON.stringify({ id: '1', object: 'chat.completion.chunk', model: 'tiny', choices: [{ index: 0, delta: { content: ' tok' }, finish_reason: null }] })}\n\n`);
        i++;
        setTimeout(tick, 5);
        return;
      }
      res.write(`data: ${JSON.stringify({ id: '1', object: 'chat.completion.chunk', model: 'tiny', choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 16, completion_tokens: n, total_tokens: 16 + n } })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    tick();
  });
}).listen(port, '127.0.0.1');
