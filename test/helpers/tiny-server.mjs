// A tiny OpenAI-compatible server started as its own process by launch/ and matrix tests (node tiny-server.mjs PORT MODE).
// MODE: ok (answers at once) | never-ready (listens, answers 503 to everything) | pidfile=FILE (ok, and writes its pid there).
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';

const port = Number(process.argv[2]);
const mode = process.argv[3] ?? 'ok';
if (mode.startsWith('pidfile=')) writeFileSync(mode.slice(8), String(process.pid));
const reply = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (mode === 'never-ready') return reply(res, 503, { error: { message: 'loading model' } });
    if (req.method === 'GET' && req.url === '/v1/models') return reply(res, 200, { object: 'list', data: [{ id: 'tiny', object: 'model', owned_by: 'tiny' }] });
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      return reply(res, 200, { id: '1', object: 'chat.completion', model: 'tiny', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'length' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    }
    reply(res, 404, { error: { message: `no route ${req.url}` } });
  });
}).listen(port, '127.0.0.1');
