/** What a merged run records about where it came from (summary.json `merged`). */
export interface MergedFrom {
  runKey: string;
  shards: Array<{
    index: number;
    dir: string;
    requests: number;
    startedAt: string;
    startOffsetMs?: number;
    /** Where this shard's clock put its stamps relative to shard 0's, ms (from the wall clocks: NTP-synced hosts). */
    clockShiftMs: number;
  }>;
  /** Largest spread between the shards' starts of one row, ms. */
  rowStartSkewMs: number;
}
