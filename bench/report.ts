// The shape every benchmark returns: measured rows plus ratios against a same-run baseline.
export interface BenchRow {
  name: string;
  /** operations (or bytes) per second */
  perSecond?: number;
  unit?: string;
  p50Ms?: number;
  p99Ms?: number;
  note?: string;
}

export interface BenchRatio {
  name: string;
  /** measured / baseline */
  ratio: number;
  /** the goal for the ratio, e.g. 0.8 for "at least 80 % of baseline" */
  goal?: number;
  /** true when a smaller ratio is better */
  lowerIsBetter?: boolean;
}

export interface BenchReport {
  title: string;
  rows: BenchRow[];
  ratios: BenchRatio[];
}

const fmt = (n: number | undefined, digits = 1): string => (n === undefined ? "-" : n.toFixed(digits));

export function formatReport(r: BenchReport): string {
  const lines = [`== ${r.title}`];
  for (const row of r.rows) {
    const rate = row.perSecond === undefined ? "" : `${fmt(row.perSecond, 0)} ${row.unit ?? "ops"}/s`;
    const lat = row.p50Ms === undefined ? "" : ` p50 ${fmt(row.p50Ms, 3)} ms p99 ${fmt(row.p99Ms, 3)} ms`;
    lines.push(`  ${row.name.padEnd(48)} ${rate}${lat}${row.note ? `  (${row.note})` : ""}`);
  }
  for (const q of r.ratios) {
    const met =
      q.goal === undefined
        ? ""
        : (q.lowerIsBetter ? q.ratio <= q.goal : q.ratio >= q.goal)
          ? " goal met"
          : " GOAL MISSED";
    const goal = q.goal === undefined ? "" : ` (goal ${q.lowerIsBetter ? "<=" : ">="} ${q.goal})`;
    lines.push(`  ratio ${q.name.padEnd(42)} ${q.ratio.toFixed(3)}${goal}${met}`);
  }
  return lines.join("\n");
}

/** Percentile of a sorted-or-not sample, in the sample's unit. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  const idx = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[idx] as number;
}
