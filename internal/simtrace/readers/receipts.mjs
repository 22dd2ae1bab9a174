// Sums up the trace processor's receipts.csv (Kind, Item, Producer,
// Generated [s], Size [B], Recipient, Received [s], Elapsed [s]) by kind:
// receipts, those without a latency (NA: no generation of the item before
// the receipt), those negative, and the latency's p50 and p95. Exits
// non-zero if any receipt has no latency or a negative one.
import { readFileSync } from "node:fs";

const rows = readFileSync(process.argv[2], "utf8").trim().split("\n").slice(1).map((l) => l.split(","));
const kinds = new Map();
for (const [kind, , , , , , , elapsed] of rows) {
  const k = kinds.get(kind) ?? { n: 0, na: 0, negative: 0, latencies: [] };
  k.n++;
  if (elapsed === "NA") k.na++;
  else if (Number(elapsed) < 0) k.negative++;
  else k.latencies.push(Number(elapsed));
  kinds.set(kind, k);
}
let bad = false;
const at = (xs, q) => (xs.length ? xs[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)].toFixed(3) : "-");
for (const [kind, k] of [...kinds].sort()) {
  k.latencies.sort((a, b) => a - b);
  console.log(`  ${kind}: ${k.n} receipts, ${k.na} without a latency, ${k.negative} negative; latency p50 ${at(k.latencies, 0.5)} s, p95 ${at(k.latencies, 0.95)} s`);
  bad ||= k.na + k.negative > 0;
}
process.exit(bad ? 1 : 0);
