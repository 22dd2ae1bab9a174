#!/usr/bin/env bash
# Reads a trace (JSON lines, or .gz) with the tools of the Leios repository
# (input-output-hk/ouroboros-leios) that consume the simulators' format, as
# they stand at LEIOS_COMMIT, and fails if any of them refuses or drops a
# line, or cannot tie an id:
#
#   - the visualiser's validator, ui/schema/validate.mjs against
#     trace.ui.schema.json, run as it is on the trace gzipped into the
#     public/traces/ folder it reads;
#   - the visualiser's aggregation, ui/src/utils/timelineAggregation.ts,
#     driven by aggregate.ts beside this script as the UI's worker feeds it;
#   - with LEIOS_TRACE_HS_DECODE, a program that decodes the trace with
#     leios-trace-hs's decodeJSONL (the trace verifier's parser), given the
#     trace's path, and exits non-zero if it drops a line;
#   - with LEIOS_TRACE_PROCESSOR, the trace processor of
#     analysis/sims/trace-processor: its receipts must each have a
#     latency (a receipt before its item's generation has none), none
#     negative.
#
# The Haskell tools are not built here: give their programs when you have
# them. LEIOS_REPO is a clone of the Leios repository (or its git
# directory) that holds LEIOS_COMMIT; nothing is fetched from it but that
# commit's ui/. The Node.js packages the visualiser's code needs (ajv, and
# tsx to run TypeScript) are installed from the npm registry, at pinned
# versions, into LEIOS_READERS_CACHE (default ~/.cache/leiosnode-readers).
#
# Usage: LEIOS_REPO=DIR internal/simtrace/readers/run.sh TRACE
set -euo pipefail

LEIOS_COMMIT=${LEIOS_COMMIT:-0200037f9a097831930778e54ef2b2cebb4c558e}
AJV_VERSION=8.20.0 # the visualiser's package-lock.json's
TSX_VERSION=4.23.15

here=$(cd "$(dirname "$0")" && pwd)
trace=${1:?usage: LEIOS_REPO=DIR $0 TRACE}
trace=$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")
[ -f "$trace" ] || { echo "no trace at $trace" >&2; exit 2; }
for tool in node npm git gzip; do
	command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done
: "${LEIOS_REPO:?LEIOS_REPO must name a clone of input-output-hk/ouroboros-leios}"
if [ -d "$LEIOS_REPO/.git" ]; then git=(git -C "$LEIOS_REPO"); else git=(git --git-dir="$LEIOS_REPO"); fi
"${git[@]}" cat-file -e "$LEIOS_COMMIT^{commit}" 2>/dev/null ||
	{ echo "$LEIOS_REPO does not hold commit $LEIOS_COMMIT" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${git[@]}" archive "$LEIOS_COMMIT" ui/schema ui/src | tar -x -C "$work"

cache=${LEIOS_READERS_CACHE:-$HOME/.cache/leiosnode-readers}
if [ ! -f "$cache/node_modules/ajv/package.json" ] || [ ! -f "$cache/node_modules/tsx/package.json" ] ||
	! grep -q "\"version\": \"$TSX_VERSION\"" "$cache/node_modules/tsx/package.json"; then
	mkdir -p "$cache"
	npm install --prefix "$cache" --no-audit --no-fund --silent "ajv@$AJV_VERSION" "tsx@$TSX_VERSION" >&2
fi
ln -s "$cache/node_modules" "$work/ui/node_modules"

status=0
echo "== the visualiser's validator (ui/schema/validate.mjs)"
mkdir -p "$work/ui/public/traces"
name=$(basename "$trace" .gz)
if [[ $trace == *.gz ]]; then cp "$trace" "$work/ui/public/traces/${name%.jsonl}.jsonl.gz"; else gzip -c "$trace" >"$work/ui/public/traces/${name%.jsonl}.jsonl.gz"; fi
(cd "$work/ui" && node schema/validate.mjs) || status=1

echo "== the visualiser's aggregation (ui/src/utils/timelineAggregation.ts)"
cp "$here/aggregate.ts" "$work/ui/aggregate.ts"
cat >"$work/ui/tsconfig.json" <<'EOF'
{"compilerOptions": {"target": "ES2022", "module": "ESNext", "moduleResolution": "bundler",
  "paths": {"@/*": ["./src/*"], "@/schema/*": ["./schema/*"]}}}
EOF
(cd "$work/ui" && node node_modules/tsx/dist/cli.mjs --tsconfig tsconfig.json aggregate.ts "$trace") || status=1

plain=$trace
if [[ $trace == *.gz ]]; then plain=$work/trace.jsonl; gzip -dc "$trace" >"$plain"; fi

echo "== leios-trace-hs's decoder"
if [ -n "${LEIOS_TRACE_HS_DECODE:-}" ]; then
	"$LEIOS_TRACE_HS_DECODE" "$plain" || status=1
else
	echo "skipped: LEIOS_TRACE_HS_DECODE is not set"
fi

echo "== the trace processor (analysis/sims/trace-processor)"
if [ -n "${LEIOS_TRACE_PROCESSOR:-}" ]; then
	out=${LEIOS_TRACE_PROCESSOR_OUT:-$work}
	"$LEIOS_TRACE_PROCESSOR" --trace-file "$plain" --lifecycle-file "$out/lifecycle.csv" --cpu-file "$out/cpus.csv" \
		--resource-file "$out/resources.csv" --receipt-file "$out/receipts.csv" || status=1
	node "$here/receipts.mjs" "$out/receipts.csv" || status=1
	echo "  lifecycle: $(($(wc -l <"$out/lifecycle.csv") - 1)) items; cpus: $(($(wc -l <"$out/cpus.csv") - 1)) rows; resources: $(($(wc -l <"$out/resources.csv") - 1)) rows"
else
	echo "skipped: LEIOS_TRACE_PROCESSOR is not set"
fi

exit $status
