import { beforeAll, describe, expect, it } from 'vitest';
import { appendReply, buildTurnMessages, isConversationWorkload } from '../../src/workload/conversation.js';
import { createWorkload } from '../../src/workload/create.js';
import { loadHfTokenizer } from '../../src/workload/hf-tokenizer.js';
import type { Tokenizer } from '../../src/workload/tokenizer.js';
import { writeTinyBpe } from './tiny-bpe.js';

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadHfTokenizer(writeTinyBpe(1500));
});

describe('multi-turn conversations', () => {
  it('plans turns, user messages, output lengths and think times per conversation, seeded', async () => {
    const spec = {
      kind: 'conversation' as const,
      chat: true,
      turns: { kind: 'uniform' as const, min: 2, max: 5 },
      userTokens: { kind: 'fixed' as const, value: 200 },
      output: { kind: 'fixed' as const, value: 50 },
      thinkTimeMs: { kind: 'exponential' as const, mean: 1000 },
      prefix: { tokens: 64, groups: 2 },
    };
    const w = await createWorkload(spec, { tokenizer: tok, seed: 8 });
    expect(isConversationWorkload(w)).toBe(true);
    if (!isConversationWorkload(w)) return;
    const first = w.item(3);
    expect(first.conversation).toMatchObject({ id: 3, turn: 0, thinkTimeMs: 0 });
    expect(first.messages?.map((m) => m.role)).toEqual(['system', 'user']);
    expect(tok.countChatTokens?.(first.messages ?? [])).toBe(200);
    const turns = first.conversation?.turns ?? 0;
    expect(turns).toBeGreaterThanOrEqual(2);

    let history = appendReply(buildTurnMessages([], first), 'a reply from the server');
    for (let t = 1; t < turns; t++) {
      const next = w.turn(3, t);
      expect(next.conversation).toMatchObject({ id: 3, turn: t, turns });
      expect(next.conversation?.thinkTimeMs).toBeGreaterThanOrEqual(1);
      expect(tok.encode(next.prompt).length).toBe(200);
      const sent = buildTurnMessages(history, next);
      expect(sent.slice(0, -1)).toEqual(history);
      expect(sent[sent.length - 1]).toEqual({ role: 'user', content: next.prompt });
      history = appendReply(sent, `reply ${t}`);
    }
    expect(history.map((m) => m.role)).toEqual(['system', ...Array.from({ length: turns }, () => ['user', 'assistant']).flat()]);

    const again = await createWorkload(spec, { tokenizer: tok, seed: 8 });
    if (!isConversationWorkload(again)) return;
    expect(JSON.stringify([again.item(3), again.turn(3, 1)])).toBe(JSON.stringify([first, w.turn(3, 1)]));
  });
});
