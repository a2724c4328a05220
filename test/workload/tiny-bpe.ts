import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORDS } from '../../src/workload/words.js';

/** GPT-2's byte ↦ printable character table, as byte-level BPE tokenizer.json files use. */
function byteChars(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCharCode(cs[i] as number)));
  return out;
}

const CHAT_TEMPLATE =
  "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/**
 * Trains a small byte-level BPE (the Llama-3/Qwen layout: ByteLevel pre-tokenizer, BOS via TemplateProcessing,
 * a ChatML template) on the prompt words plus `extra` text, and writes tokenizer.json + tokenizer_config.json.
 * Few merges leave most words in several tokens, which makes decode → re-encode drift.
 */
export function writeTinyBpe(merges: number, extra = ''): string {
  const chars = byteChars();
  const enc = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => chars[b] as string);
  const freq = new Map<string, number>();
  const add = (w: string, n: number) => freq.set(w, (freq.get(w) ?? 0) + n);
  WORDS.forEach((w, i) => {
    add(` ${w}`, 40 - (i % 37));
    add(w, 3);
  });
  for (const w of extra.split(/\s+/).filter(Boolean)) add(` ${w}`, 2);
  let words = [...freq].map(([w, n]) => ({ syms: enc(w), n }));
  const vocab = new Map<string, number>(chars.map((c, i) => [c, i]));
  const mergeList: string[] = [];
  for (let m = 0; m < merges; m++) {
    const pairs = new Map<string, number>();
    for (const { syms, n } of words) for (let i = 0; i + 1 < syms.length; i++) {
      const k = `${syms[i]} ${syms[i + 1]}`;
      pairs.set(k, (pairs.get(k) ?? 0) + n);
    }
    let best: string | undefined;
    let bestN = 0;
    for (const [k, n] of pairs) if (n > bestN || (n === bestN && best !== undefined && k < best)) [best, bestN] = [k, n];
    if (!best) break;
    const [a, b] = best.split(' ') as [string, string];
    mergeList.push(best);
    vocab.set(a + b, vocab.size);
    words = words.map(({ syms, n }) => {
      const out: string[] = [];
      for (let i = 0; i < syms.length; i++) {
        if (syms[i] === a && syms[i + 1] === b) out.push(a + b), i++;
        else out.push(syms[i] as string);
      }
      return { syms: out, n };
    });
  }
  const special = (content: string, id: number) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const bos = vocab.size;
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special('<s>', bos), special('<|im_start|>', bos + 1), special('<|im_end|>', bos + 2)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [bos], tokens: ['<s>'] } },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab: Object.fromEntries(vocab), merges: mergeList,
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'inferbench-tok-'));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ bos_token: '<s>', eos_token: '<|im_end|>', chat_template: CHAT_TEMPLATE }));
  return dir;
}
