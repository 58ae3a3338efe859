#!/usr/bin/env bash
# How closely a card served with --timing model keeps its model's pace:
# the same workload at the same load through fio's nbd engine on the
# served card and in `flashlab run` (virtual time), side by side.
#
#   scripts/serve-timing.sh [DEVICE] [SCALE] [TIME_SCALE] [SECONDS]
#        (defaults: p420m 8192 32 20)
#
# The card is served first with --timing none and brought to steady state
# with data (random 4 KiB writes, 7 times its capacity, as `run
# --precondition` writes about 7 drive writes), stopped cleanly, then served
# again with --timing model --time-scale K (the card's clock K times
# slower, so that this machine, fio included, carries its rate). fio runs 4
# KiB random reads, then random writes, 2 jobs x QD 16 over a Unix socket;
# its IOPS are multiplied by K and its latencies divided by K to be on the
# card's clock. fio's jobs are seeded apart (--randrepeat=0): with its
# default every job writes the same offsets in the same order, which halves
# the card's write amplification. `flashlab run DEVICE --scale SCALE --threads 2 --qd 16
# --precondition` gives the model's figures for the same workloads.
#
# Needs fio (Debian package) and a release build of flashlab.
set -euo pipefail
device="${1:-p420m}"
scale="${2:-8192}"
k="${3:-32}"
secs="${4:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
work="$(mktemp -d /tmp/flashlab-serve-timing.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
uri="nbd+unix:///$device?socket=$work/card.sock"

serve none
size=$(nbdinfo --size "$uri")
echo "preconditioning: random 4 KiB writes, 7 times the card's $size bytes..." >&2
fio --name=pre --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 \
    --size="$size" --loops=7 --norandommap --randrepeat=0 --group_reporting --output-format=terse >"$work/pre.out"
kill -TERM "$pid"; wait "$pid" || true

serve model --time-scale "$k"
echo "$device scale $scale, 4 KiB random, 2 jobs x QD 16; served: fio nbd engine ${secs} s, --time-scale $k (figures scaled back to the card's clock)"
printf '%-10s %14s %12s %14s %12s %9s %9s\n' workload "served IOPS" "avg us" "run IOPS" "avg us" "IOPS err" "lat err"
for rw in randread randwrite; do
    w=$([ "$rw" = randread ] && echo 4k-read || echo 4k-write)
    fio --name=m --ioengine=nbd --uri="$uri" --rw="$rw" --bs=4k --iodepth=16 --numjobs=2 --norandommap --randrepeat=0 \
        --group_reporting --time_based --runtime="$secs" --output-format=json 2>/dev/null | sed -n '/^{/,$p' >"$work/$rw.json"
    "$flashlab" run "$device" --scale "$scale" -w "$w" --threads 2 --qd 16 --precondition -q --json "$work/$w.json" >/dev/null
    python3 - "$work/$rw.json" "$work/$w.json" "$k" "$rw" <<'EOF'
import json, sys
fio, run, k, rw = json.load(open(sys.argv[1]))["jobs"][0], json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
side = "read" if rw == "randread" else "write"
s_iops = fio[side]["iops"] * k
s_lat = fio[side]["lat_ns"]["mean"] / 1e3 / k
m = run["phases"][-1]["summary"][side]
r_iops, r_lat = m["iops"], m["latency_avg_ms"] * 1e3
print(f"{rw:<10} {s_iops:14,.0f} {s_lat:12.1f} {r_iops:14,.0f} {r_lat:12.1f} {100*(s_iops/r_iops-1):+8.1f}% {100*(s_lat/r_lat-1):+8.1f}%")
EOF
done
kill -TERM "$pid"; wait "$pid" || true
echo "how late paced replies left (wall clock):"
grep -o "[0-9]* replies late by.*" "$work/serve.log" | tail -1
