import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../dialects/types.js';

/** A model's chat template from tokenizer_config.json, rendered as transformers' apply_chat_template does. */
export interface ChatTemplate {
  render(messages: readonly ChatMessage[]): string;
}

type TokenValue = string | { content?: unknown } | null | undefined;

function tokenText(value: unknown): string | undefined {
  const v = value as TokenValue;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof v.content === 'string') return v.content;
  return undefined;
}

/** The template text from a tokenizer_config.json (string, or the named list newer configs use). */
export function chatTemplateSource(config: Record<string, unknown>): string | undefined {
  const t = config['chat_template'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const entries = t as Array<{ name?: unknown; template?: unknown }>;
    const chosen = entries.find((e) => e.name === 'default') ?? entries[0];
    if (chosen && typeof chosen.template === 'string') return chosen.template;
  }
  return undefined;
}

export function compileChatTemplate(source: string, config: Record<string, unknown>): ChatTemplate {
  const template = new Template(source);
  const specials: Record<string, string> = {};
  for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const text = tokenText(config[key]);
    if (text !== undefined) specials[key] = text;
  }
  return {
    render: (messages) =>
      template.render({
        ...specials,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        add_generation_prompt: true,
      }),
  };
}
