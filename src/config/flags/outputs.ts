/** Flags of the outputs section: what is printed and written, and the run's label. */
import { parseRecordPolicy } from '../../store/record-policy.js';
import { listItems, parseChoice } from '../parse.js';
import { text } from './parsers.js';
import { flag, type FlagCommand, type FlagParser } from './spec.js';

export const FORMAT_CHOICES = ['table', 'md', 'json', 'csv', 'html', 'png', 'svg'] as const;
export type ReportFormat = (typeof FORMAT_CHOICES)[number];

const RUN_PREDICT: readonly FlagCommand[] = ['run', 'predict'];
const RUN: readonly FlagCommand[] = ['run'];

const formats: FlagParser<ReportFormat[]> = (raw, p, name) =>
  (listItems(name, raw, p) ?? []).map((f) => parseChoice(name, f, FORMAT_CHOICES, p)).filter((f): f is ReportFormat => f !== undefined);

const records: FlagParser<ReturnType<typeof parseRecordPolicy>> = (raw, p) => {
  try {
    return parseRecordPolicy(raw);
  } catch (err) {
    p.push((err as Error).message + ' — use full, no-gaps, sample:FRACTION or none');
    return undefined;
  }
};

export const OUTPUT_FLAGS = [
  flag({ name: 'json', section: 'outputs', group: 'outputs', commands: RUN_PREDICT, help: 'print summary.json to stdout and nothing else there' }),
  // Names are checked against the report's column catalog by the command (report/columns.ts parseColumns).
  flag({ name: 'columns', arg: 'list', section: 'outputs', group: 'outputs', commands: RUN_PREDICT,
    help: 'terminal table columns, e.g. default,p90 or rps,ttft,p50,p99 (see docs/reports.md; table.md keeps every seed column)',
    parse: (raw, p, name) => listItems(name, raw, p) ?? [] }),

  flag({ name: 'out', arg: 'dir', section: 'outputs', group: 'outputs', commands: RUN, shown: './inferbench-results/<time>-<label>', help: 'run folder', parse: text }),
  flag({ name: 'format', arg: 'list', section: 'outputs', group: 'outputs', commands: RUN, value: 'table,md,json,csv',
    help: 'outputs: table,md,json,csv,html,png,svg (html/png/svg: the report and charts, into the run folder)', parse: formats }),
  flag({ name: 'records', arg: 'policy', section: 'outputs', group: 'outputs', commands: RUN, value: 'full',
    help: 'what requests.jsonl keeps: full | no-gaps | sample:FRACTION | none', parse: records }),
  flag({ name: 'no-progress', section: 'outputs', group: 'outputs', commands: RUN, help: 'no live progress lines' }),
  flag({ name: 'resume', arg: 'dir', section: 'outputs', group: 'outputs', commands: RUN, help: 'continue an interrupted run from its first unfinished row', parse: text }),
  // Read by cli/main.ts (the dashboard), not by the option resolvers.
  flag({ name: 'ui', section: 'outputs', group: 'outputs', commands: RUN, help: 'show the run live in the web dashboard (kept up after the run until Ctrl-C)' }),
  flag({ name: 'label', arg: 'text', section: 'outputs', group: 'metadata', commands: RUN, help: 'free label stored with the run', parse: text }),
] as const;
