#!/usr/bin/env bash
# The loop closed: the same card measured three ways agree. For each
# workload (4K random write and read, 8K 70/30, at 16 threads x QD 16):
#   1. `flashlab run DEVICE --precondition` in virtual time (the model);
#   2. the card served with real data (`flashlab serve`), preconditioned
#      through NBD with the same workload and drive writes as the model's
#      preconditioning (--timing none), then served again with --timing
#      model --time-scale K and measured by the lab on real storage
#      (`flashlab run --target nbd+unix://...`, through fio's nbd engine);
#      IOPS multiplied by K, latencies divided by K, to be on the card's clock.
# Prints both, the error, and the tolerance (10%).
#
#   scripts/loop-closed.sh [DEVICE] [SCALE] [TIME_SCALE] [SECONDS]
#        (defaults: p420m 8192 32 20)
#
# Needs fio and libnbd-bin (Debian packages) and a release build of flashlab.
set -euo pipefail
device="${1:-p420m}"
scale="${2:-8192}"
k="${3:-32}"
secs="${4:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
work="$(mktemp -d /tmp/flashlab-loop-closed.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
uri="nbd+unix:///$device?socket=$work/card.sock"

# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

echo "$device scale $scale, 16 threads x QD 16; served at --time-scale $k, measured by flashlab run --target through fio's nbd engine for $secs s (figures on the card's clock)"
printf '%-9s %12s %10s %12s %10s %9s %9s\n' workload "served IOPS" "avg ms" "model IOPS" "avg ms" "IOPS err" "lat err"
for w in 4k-write 4k-read 8k-7030; do
    "$flashlab" run "$device" --scale "$scale" -w "$w" --threads 16 --qd 16 --precondition -q --json "$work/model-$w.json" >/dev/null
    read -r dw pre_rw pre_mix pre_bs < <(python3 - "$work/model-$w.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); p = r["phases"][0]; m = p["workload"]
rw = "randwrite" if m["read_ppm"] == 0 else "randrw"
print(p["drive_writes"], rw, round(m["read_ppm"] / 1e4), m["sizes"][0][0])
PY
)
    rm -rf "$work/store"
    serve none
    size=$(nbdinfo --size "$uri")
    # The drive writes of the model's preconditioning, with its workload.
    io=$(python3 -c "print(int($dw * $size / (1 - $pre_mix / 100)) // 4096 * 4096)")
    fio --name=pre --ioengine=nbd --uri="$uri" --rw="$pre_rw" --rwmixread="$pre_mix" --bs="$pre_bs" --iodepth=16 --numjobs=16 \
        --io_size=$((io / 16 / 4096 * 4096)) --norandommap --randrepeat=0 --group_reporting --output-format=terse >"$work/pre.out"
    kill -TERM "$pid"; wait "$pid" || true
    serve model --time-scale "$k"
    "$flashlab" run --target "$uri" --workload "$w" --threads 16 --qd 16 --interval "$((secs / 5))" --duration "$secs" -q --json "$work/served-$w.json" >/dev/null
    kill -TERM "$pid"; wait "$pid" || true
    python3 - "$work/served-$w.json" "$work/model-$w.json" "$k" "$w" <<'PY'
import json, sys
served, model, k, w = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
s, m = served["phases"][-1]["summary"]["all"], model["phases"][-1]["summary"]["all"]
si, sl = s["iops"] * k, s["latency_avg_ms"] / k
print(f"{w:<9} {si:12,.0f} {sl:10.3f} {m['iops']:12,.0f} {m['latency_avg_ms']:10.3f} {100*(si/m['iops']-1):+8.1f}% {100*(sl/m['latency_avg_ms']-1):+8.1f}%")
PY
done
echo "how late paced replies left (wall clock), last server:"
grep -o "[0-9]* replies late by.*" "$work/serve.log" | tail -1
