// Runs the Leios visualiser's aggregation (ui/src/utils/timelineAggregation.ts
// of the upstream checkout this file is copied beside) over a trace, as
// its web worker feeds it: the simulators' vote and tx event names mapped
// to the UI's, only the events it draws kept. Prints what the UI would
// show at the trace's end, and exits non-zero when the aggregation finds
// votes on EBs it never saw, or certifications of unknown EBs: a trace
// whose ids do not tie.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import {
  buildChainAtTime,
  computeAggregatedDataAtTime,
} from "@/utils/timelineAggregation";

// The worker's renaming (ui/src/components/Sim/hooks/worker.ts), which it
// does not export.
const renamed: Record<string, string> = {
  VTBundleGenerated: "VotesGenerated",
  VTBundleSent: "VotesSent",
  VTBundleReceived: "VotesReceived",
  TXGenerated: "TxsGenerated",
  TXSent: "TxsSent",
  TXReceived: "TxsReceived",
};
const drawn = new Set([
  "EBGenerated", "EBSent", "EBReceived", "RBGenerated", "RBSent", "RBReceived",
  "VotesGenerated", "VotesSent", "VotesReceived", "AnnouncementSent", "AnnouncementReceived",
]);

const path = process.argv[2];
let raw = readFileSync(path);
if (path.endsWith(".gz")) raw = gunzipSync(raw);
const events: any[] = [];
const nodes = new Set<string>();
let lines = 0;
for (const line of raw.toString("utf8").split("\n")) {
  if (!line) continue;
  lines++;
  const e = JSON.parse(line);
  const type = renamed[e.message.type] ?? e.message.type;
  for (const k of ["node", "producer", "sender", "recipient"]) {
    if (typeof e.message[k] === "string") nodes.add(e.message[k]);
  }
  if (drawn.has(type)) events.push({ ...e, message: { ...e.message, type } });
}
const end = events.length ? events[events.length - 1].time_s : 0;
const topology = { nodes: new Map(), links: new Map() } as any;
const state = computeAggregatedDataAtTime(events, end, [...nodes].sort(), topology);
const chain = buildChainAtTime(events, end);

let votesGenerated = 0;
for (const e of events) {
  if (e.message.type === "VotesGenerated") {
    for (const n of Object.values(e.message.votes as Record<string, number>)) votesGenerated += n;
  }
}
const ebs = [...chain.ebs.values()];
const votesCredited = ebs.reduce((s, eb) => s + (eb.voteCount ?? 0), 0);
const certified = [...chain.rbs.values()].filter((rb) => rb.certifiesEbId);
const certifiedKnown = certified.filter((rb) => chain.ebs.has(rb.certifiesEbId!));

console.log(`ui aggregation: ${lines} lines, ${events.length} drawn events, ${nodes.size} nodes, at ${end.toFixed(3)} s`);
console.log(`  events by type: ${JSON.stringify(state.eventCounts.byType)}`);
for (const [node, s] of state.nodes) {
  const m = (x: Map<any, any>) => JSON.stringify(Object.fromEntries(x));
  console.log(`  ${node}: generated ${m(s.generated)} sent ${m(s.sent)} received ${m(s.received)} bytes ${s.bytesSent}/${s.bytesReceived}`);
}
console.log(`  chain: ${chain.rbs.size} RBs, ${ebs.length} EBs, ${ebs.filter((eb) => (eb.voteCount ?? 0) > 0).length} EBs with votes`);
console.log(`  votes: ${votesGenerated} generated, ${votesCredited} credited to an EB`);
console.log(`  certifications: ${certified.length}, of an EB the UI knows: ${certifiedKnown.length}`);
if (votesCredited !== votesGenerated || certifiedKnown.length !== certified.length) {
  console.log("FAIL: votes or certifications the UI cannot tie to an EB");
  process.exit(1);
}
console.log("OK");
