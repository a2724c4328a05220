/**
 * Time to build 10,000 prompts of 2,048 tokens, with a real tokenizer.json and with the approximate default.
 * Usage: npx tsx bench/prompts.ts [path/to/tokenizer.json ...]   (default: a byte-level BPE trained on the spot)
 * Every prompt of a 200-prompt sample is re-counted with the full tokenizer to confirm exactness.
 */
import { createWorkload } from '../src/workload/create.js';
import { loadHfTokenizer } from '../src/workload/hf-tokenizer.js';
import { countPromptTokens, loadApproxTokenizer, type Tokenizer } from '../src/workload/tokenizer.js';
import { writeTinyBpe } from '../test/workload/tiny-bpe.js';

const N = 10_000;
const TOKENS = 2048;

async function run(label: string, load: () => Promise<Tokenizer>, chat: boolean, n = N): Promise<void> {
  let t = performance.now();
  const tokenizer = await load();
  const loadMs = performance.now() - t;
  t = performance.now();
  const w = await createWorkload(
    { kind: 'synthetic', prompt: { kind: 'fixed', value: TOKENS }, output: { kind: 'fixed', value: 128 }, chat },
    { tokenizer, seed: 1 },
  );
  const setupMs = performance.now() - t;
  t = performance.now();
  let chars = 0;
  for (let i = 0; i < n; i++) chars += w.item(i).prompt.length;
  const buildMs = performance.now() - t;
  t = performance.now();
  let exact = 0;
  const sample = Math.min(200, n);
  for (let i = 0; i < sample; i++) {
    const it = w.item(Math.floor((i * n) / sample));
    const counted = it.messages && tokenizer.countChatTokens ? tokenizer.countChatTokens(it.messages) : countPromptTokens(tokenizer, it.prompt);
    if (counted === TOKENS) exact++;
  }
  const checkMs = performance.now() - t;
  console.log(
    `${label.padEnd(44)} load ${(loadMs / 1000).toFixed(2)} s | setup ${(setupMs / 1000).toFixed(2)} s | ` +
      `${n} × ${TOKENS}-token prompts ${(buildMs / 1000).toFixed(2)} s (${(chars / n).toFixed(0)} chars each) | ` +
      `exact ${exact}/${sample} (full re-count ${(checkMs / sample).toFixed(1)} ms/prompt)${w.description.includes('re-encoding') ? ' [re-encode]' : ''}`,
  );
}

const paths = process.argv.slice(2);
const real = paths.length > 0 ? paths : [`${writeTinyBpe(1500)}/tokenizer.json`];
for (const p of real) {
  await run(`tokenizer.json ${p.split('/').slice(-3).join('/')}`, () => loadHfTokenizer(p), false);
  await run(`  same, chat template counted`, () => loadHfTokenizer(p), true);
}
await run('approx (o200k_base, gpt-tokenizer)', loadApproxTokenizer, false);
// The fallback re-encodes every prompt (~25 ms each here): 200 prompts show its per-prompt cost.
await run('re-encode fallback (BPE with 60 merges)', () => loadHfTokenizer(writeTinyBpe(60)), false, 200);
