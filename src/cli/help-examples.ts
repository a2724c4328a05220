/**
 * The examples printed at the end of each command's --help. Each line is a complete command line; the tests
 * (test/cli/help.test.ts) parse every one with the command's own flags, so an example cannot drift from them.
 */
import type { Example } from './help-format.js';

const SERVER = 'http://127.0.0.1:8000';

export const EXAMPLES: Record<string, readonly Example[]> = {
  run: [
    { command: 'inferbench run', what: 'an 11-row rate sweep of the built-in simulated engine (about 3 minutes)' },
    { command: `inferbench run --target ${SERVER} --profile concurrent --concurrency 1,8,32`, what: 'your server at 1, 8 and 32 streams' },
    { command: `inferbench run --target ${SERVER} --rate 1,4,inf --max-seconds 1m`, what: '1 and 4 req/s for a minute each, then 100 requests at once' },
    { command: `inferbench run --target ${SERVER} --profile grid --input-lens 128,2048 --output-lens 128,512`, what: 'the input × output grid of the seed tables' },
    { command: `inferbench run --target ${SERVER} --profile capacity --slo ttft:300,itl:50`, what: 'the highest rate at which 99% of requests meet the SLO' },
    { command: `inferbench run --target ${SERVER} --rate 1000 --workers auto`, what: '1,000 req/s sent by as many load threads as it needs' },
  ],
  predict: [
    { command: 'inferbench predict --engine sglang --gpu H100-80GB --profile constant --rate 4,16', what: 'two rows in virtual time, well under a second' },
    { command: 'inferbench predict --profile grid --input-lens 128,2048 --output-lens 128,512 --gpus 2', what: 'a grid on two tensor-parallel GPUs' },
    { command: 'inferbench predict --profile capacity --slo ttft:300,itl:50', what: 'the capacity search of the default deployment' },
    { command: 'inferbench predict --seed-file data/seeds/004_44f3a8b9f2336bbb.txt', what: 'every published figure of a seed table beside the prediction' },
  ],
  sim: [
    { command: 'inferbench sim --port 8000', what: 'a simulated vLLM at http://127.0.0.1:8000 until Ctrl-C' },
    { command: 'inferbench sim --engine tgi --faults 429:0.05,reset:0.01', what: "TGI's API, refusing 5% of requests and resetting 1%" },
    { command: 'inferbench sim --model-time-scale 1.3', what: 'a deployment 30% slower than the catalog says' },
  ],
  plan: [
    { command: 'inferbench plan --model Qwen2-72B-Instruct --slo ttft:2000,itl:100 --rate 5', what: 'the cheapest deployment serving 5 req/s within the SLO' },
    { command: 'inferbench plan --model Llama-3.1-8B-Instruct --slo ttft:500,itl:50 --output-tokens-per-s 20000 --gpu H100,A100-80GB', what: 'a load in output tokens per second, two GPUs only' },
    { command: 'inferbench plan --model Qwen2-7B-Instruct --slo ttft:1000,itl:60 --rate 4 --gpu A100-80GB --verify 2 --server-cmd sim --save-calibration measured.json', what: 'launch the top two answers (here as inferbench sim), measure their capacity, keep measured/predicted' },
  ],
  ls: [
    { command: 'inferbench ls', what: 'the runs under ./inferbench-results' },
    { command: 'inferbench ls --model Qwen --since 2026-11-01 --json', what: 'filtered, as JSON' },
  ],
  merge: [{ command: 'inferbench merge results/shard-0 results/shard-1 results/shard-2 --out results/merged', what: 'three shards of one run as one run folder' }],
  k8s: [
    {
      command: 'inferbench k8s --pods 3 --image ghcr.io/you/inferbench:0.1 --pvc bench-results -- --target http://vllm:8000 --profile constant --rate 30 --max-seconds 60',
      what: 'one 30 req/s run sent by 3 pods (10 req/s each), merged by a second Job',
    },
  ],
  ui: [{ command: 'inferbench ui --port 0', what: 'the dashboard over ./inferbench-results on any free port' }],
  import: [{ command: 'inferbench import benchmarks.json --label guidellm-h100', what: "a GuideLLM (or vLLM, SGLang, AIPerf, genai-bench) result as a run" }],
  report: [{ command: 'inferbench report 0c33f6bf --format html,png', what: 'the HTML report and charts of a saved run (ids: inferbench ls)' }],
  compare: [{ command: 'inferbench compare 0c33f6bf 844cb83f --slo ttft:500 --gpu-hour-price 2.49', what: 'two runs side by side, the first as the baseline' }],
  gate: [
    { command: 'inferbench gate --baseline 0c33f6bf --candidate 844cb83f', what: 'did the candidate regress beyond the default thresholds? exit 0 pass, 1 fail, 3 inconclusive' },
    { command: 'inferbench gate --baseline b1,b2,b3 --candidate c1,c2,c3 --max-regression ttft.p99=+20% --markdown "$GITHUB_STEP_SUMMARY" --junit gate.xml', what: 'three runs a side, p99 TTFT too, for a pull request' },
  ],
};
