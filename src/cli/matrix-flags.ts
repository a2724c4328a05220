/** `inferbench matrix`'s own flags (kept light: main.ts loads them for --help; the command loads when it runs). */
import type { Option } from 'commander';
import { opt } from './help-format.js';

const CELLS = 'Cells:';
const LIFECYCLE = 'Server lifecycle:';
const RESULTS = 'Results and output:';

/** Repeatable flags collect into a list. */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function matrixFlags(): Option[] {
  return [
    opt(CELLS, '--server-cmd <cmd>', 'server start command with placeholders {port} {name} and every --vary key; repeat as NAME=CMD for several servers').argParser(collect),
    opt(CELLS, '--vary <key=v1,v2>', 'values of a placeholder; repeat for more keys: the cells are every combination, times every server').argParser(collect),
    opt(CELLS, '--cells <file>', 'YAML or JSON list of cells (a server and its values each) for sets that are not a product'),
    opt(CELLS, '--server-url <name=url>', 'a server already running, measured as a cell of its own (not started or stopped); repeatable').argParser(collect),
    opt(LIFECYCLE, '--ready-timeout <time>', 'spawn → ready (health/model route and a one-token request) within this, else the cell is not-ready', { value: '15m' }),
    opt(LIFECYCLE, '--stop-timeout <time>', 'SIGTERM to the server\'s process group, SIGKILL after this', { value: '30s' }),
    opt(LIFECYCLE, '--stop-cmd <cmd>', 'stop command (same placeholders) for start commands that return at once: docker run -d …, kubectl apply …'),
    opt(RESULTS, '--out <dir>', 'the matrix folder (new): matrix.json, matrix.md, matrix.html and one folder per cell', { shown: './inferbench-results/<time>-matrix' }),
    opt(RESULTS, '--results <dir>', 'results directory the default --out is made in', { value: 'inferbench-results' }),
    opt(RESULTS, '--resume <dir>', 'run the cells of this matrix folder that did not finish (Ctrl-C), with the cells and run flags it was started with'),
    opt(RESULTS, '--gpu-hour-price <usd>', 'USD per GPU-hour (one price, or GPU=USD pairs) for capacity per dollar and cost in the comparison'),
  ];
}
