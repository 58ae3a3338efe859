#!/usr/bin/env bash
# The loop closed through the whole procedure: the reviewers' 4K and
# 8K 70/30 profiles run by `flashlab review` in virtual time, and by
# `flashlab review --target` through NBD on the same card served with real
# data (`flashlab serve --timing model --time-scale K`), each profile
# secure-erased over the card's control socket (--served-store) and
# preconditioned for the same time on the card's clock (the model's
# preconditioning, times K on the wall clock). Served figures are
# multiplied back to the card's clock (IOPS x K, latency / K). Prints 4K
# write (steady), 4K read and 8K 70/30 at 16T/16Q both ways, the error and
# the tolerance (10%): over all of a served test's rounds, and over its
# rounds after the first. The wall-clock gap between two fio runs (about
# half a second) is K times longer on the served card's clock, idle time
# in which its GC catches up; the virtual-time review has no such gap, so
# a served test's first round is a transient the model does not see (the
# 4K tests run 6 rounds so that 5 remain after it; a matrix point's first
# measured round follows its fio ramp time already).
#
#   scripts/loop-closed-review.sh [DEVICE] [SCALE] [TIME_SCALE]
#        (defaults: p420m 8192 32; about 8 minutes)
#
# Needs fio and libnbd-bin (Debian packages) and a release build of flashlab.
set -euo pipefail
device="${1:-p420m}"
scale="${2:-8192}"
k="${3:-32}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
work="$(mktemp -d /tmp/flashlab-loop-review.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
uri="nbd+unix:///$device?socket=$work/card.sock"

"$flashlab" review "$device" --scale "$scale" --format stock --profiles 4k,8k7030 --out "$work/model" -q >/dev/null
# The model's preconditioning time on the card's clock, on the wall clock
# of a card served K times slower.
hours=$(python3 -c "
import json; r = json.load(open('$work/model/results.json'))
print(max(j['precondition']['virtual_seconds'] for j in r['jobs']) * $k / 3600)")
serve model --time-scale "$k"
echo "$device stock, scale $scale: flashlab review in virtual time, and flashlab review --target through NBD on the card served at --time-scale $k (preconditioning $hours wall hours a profile; 1 s rounds)"
"$flashlab" review --target "$uri" --served-store "$work/store" --profiles 4k,8k7030 --interval 1 --rounds-4k 6 \
    --precondition-hours "$hours" --out "$work/served" -q >/dev/null
kill -TERM "$pid"; wait "$pid" || true
python3 - "$work/served/results.json" "$work/model/results.json" "$k" <<'PY'
import json, sys
served, model, k = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
def test(r, profile, name):
    j = next(j for j in r["jobs"] if j["profile"] == profile)
    return next(t for t in j["tests"] if t["name"] == name)
def later(t, d):
    # The rounds after the first, merged: IOPS over their time, latency
    # weighted by their I/Os (the test's own direction, or both).
    iv = t["intervals"][1:]
    key = {"read": "read_iops", "write": "write_iops", "all": "iops"}[d]
    lat = {"read": "read_latency_avg_ms", "write": "write_latency_avg_ms", "all": "latency_avg_ms"}[d]
    ios = [i[key] * i["length_s"] for i in iv]
    return {"iops": sum(ios) / sum(i["length_s"] for i in iv), "latency_avg_ms": sum(n * i[lat] for n, i in zip(ios, iv)) / sum(ios)}
print(f"{'test':<22} {'rounds':<7} {'served IOPS':>12} {'avg ms':>8} {'model IOPS':>12} {'avg ms':>8} {'IOPS err':>9} {'lat err':>8}  (tolerance 10%)")
for name, profile, tname, d in [("4K write (steady)", "4k", "4K write", "write"), ("4K read", "4k", "4K read", "read"), ("8K 70/30 16T/16Q", "8k7030", "16T/16Q", "all")]:
    t, m = test(served, profile, tname), test(model, profile, tname)["summary"][d]
    for rounds, s in [("all", t["summary"][d]), ("2nd on", later(t, d))]:
        si, sl = s["iops"] * k, s["latency_avg_ms"] / k
        e1, e2 = 100 * (si / m["iops"] - 1), 100 * (sl / m["latency_avg_ms"] - 1)
        ok = "ok" if abs(e1) <= 10 and abs(e2) <= 10 else "MISS"
        print(f"{name:<22} {rounds:<7} {si:12,.0f} {sl:8.3f} {m['iops']:12,.0f} {m['latency_avg_ms']:8.3f} {e1:+8.1f}% {e2:+7.1f}%  {ok}")
for j in served["jobs"]:
    print(f"{j['profile']}: {j['measured']['erased']}")
    for t in j["tests"]:
        if t["name"] in ("4K write", "4K read", "16T/16Q"):
            print(f"  served {t['name']} per 1 s round (card's clock): " + ", ".join(f"{i['iops'] * k:,.0f}" for i in t["intervals"]))
PY
echo "how late paced replies left (wall clock):"
grep -o "[0-9]* replies late by.*" "$work/serve.log" | tail -1
