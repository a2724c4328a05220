/** Parsers for the flag table's rows, built on config/parse.ts (each pushes one problem naming the flag, never throws). */
import { parseChoice, parseDuration, parseNumber, parseNumberList, type NumberRule } from '../parse.js';
import type { FlagParser } from './spec.js';

export const number =
  (rule: NumberRule): FlagParser<number> =>
  (raw, p, flag) =>
    parseNumber(flag, raw, p, rule);

export const wholeNumber = (rule: Omit<NumberRule, 'integer'> = { positive: true }): FlagParser<number> => number({ integer: true, ...rule });

export const numberList =
  (rule: NumberRule): FlagParser<number[]> =>
  (raw, p, flag) =>
    parseNumberList(flag, raw, p, rule);

/** Seconds: `30`, `500ms`, `5m`, `1m30s`. */
export const seconds =
  (rule: { min?: number; positive?: boolean }): FlagParser<number> =>
  (raw, p, flag) =>
    parseDuration(flag, raw, p, rule);

export const choice =
  <const T extends string>(choices: readonly T[]): FlagParser<T> =>
  (raw, p, flag) =>
    parseChoice(flag, raw, choices, p);

/** The text as given. */
export const text: FlagParser<string> = (raw) => raw;
