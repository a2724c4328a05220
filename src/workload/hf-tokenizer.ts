import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { configError } from '../core/errors.js';
import type { ChatMessage } from '../dialects/types.js';
import { chatTemplateSource, compileChatTemplate } from './chat-template.js';
import type { Tokenizer } from './tokenizer.js';

async function readJson(path: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw configError(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw configError(`${path} is not a JSON object`, `expected a Hugging Face ${what}`);
}

/**
 * A Hugging Face tokenizer.json (the file or its folder). tokenizer_config.json beside it, when present, gives
 * the chat template (rendered with @huggingface/jinja) and the special-token settings.
 */
export async function loadHfTokenizer(path: string): Promise<Tokenizer> {
  let file = path;
  try {
    if ((await stat(path)).isDirectory()) file = join(path, 'tokenizer.json');
  } catch {
    throw configError(`tokenizer not found: ${path}`, 'pass a tokenizer.json file or the folder holding it');
  }
  const json = await readJson(file, 'tokenizer.json');
  const configPath = join(dirname(file), 'tokenizer_config.json');
  const hasConfig = await stat(configPath).then(
    (s) => s.isFile(),
    () => false,
  );
  const config = hasConfig ? await readJson(configPath, 'tokenizer_config.json') : {};
  let hf: HfTokenizer;
  try {
    hf = new HfTokenizer(json, config);
  } catch (err) {
    throw configError(`cannot load tokenizer ${file}: ${(err as Error).message}`);
  }
  const encode = (text: string): number[] => hf.encode(text, { add_special_tokens: false }).ids;
  const specialTokens = hf.encode('the', { add_special_tokens: true }).ids.length - encode('the').length;
  const source = chatTemplateSource(config);
  const template = source === undefined ? undefined : compileChatTemplate(source, config);
  const folder = basename(dirname(file));
  const tokenizer: Tokenizer = {
    name: `${folder}/${basename(file)}`,
    exact: true,
    encode,
    decode: (ids: number[]) => hf.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    specialTokens,
  };
  if (!template) return tokenizer;
  return {
    ...tokenizer,
    // The rendered template carries BOS and role markers as text; servers encode it without adding more.
    countChatTokens: (messages: readonly ChatMessage[]) => encode(template.render(messages)).length,
  };
}
