#!/usr/bin/env bash
# Speed of a served card beside nbdkit's memory plugin, in the same run:
# fio's nbd engine, 4 KiB random read and write, 2 jobs x QD 16, 15 s
# each, over a Unix socket. The card is a scaled FlashMAX II served with
# --timing none, brought to steady state with data first (two passes of
# random 4 KiB writes over the whole export); nbdkit's memory plugin
# serves the same size. fio's jobs are seeded apart (--randrepeat=0): with
# its default both jobs write the same offsets in the same order, which
# halves the card's write amplification. Prints one line per target and workload.
#
#   scripts/serve-bench.sh [SCALE]     (default 2048: a 0.6 GB export)
#
# Needs fio, nbdkit (Debian packages) and a release build of flashlab.
set -euo pipefail
scale="${1:-2048}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
work="$(mktemp -d /tmp/flashlab-serve-bench.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$flashlab" serve flashmax2 --scale "$scale" --store "$work/store" --unix "$work/card.sock" --timing none 2>"$work/serve.log" &
# The socket is bound before the card is mounted: wait until it answers.
for _ in $(seq 300); do nbdinfo --size "nbd+unix:///flashmax2?socket=$work/card.sock" >/dev/null 2>&1 && break; sleep 0.1; done
size=$(nbdinfo --size "nbd+unix:///flashmax2?socket=$work/card.sock")
nbdkit --unix "$work/kit.sock" --foreground memory "$size" 2>"$work/nbdkit.log" &
for _ in $(seq 100); do [ -S "$work/kit.sock" ] && break; sleep 0.1; done

job() { # uri rw runtime extra
    fio --name=b --ioengine=nbd --uri="$1" --rw="$2" --bs=4k --iodepth=16 --numjobs=2 --randrepeat=0 \
        --group_reporting --time_based --runtime="$3" $4 --output-format=json 2>/dev/null | sed -n '/^{/,$p' |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; r=j["read"]["iops"]+j["write"]["iops"]; print(f"{r:,.0f}")'
}
card="nbd+unix:///flashmax2?socket=$work/card.sock"
kit="nbd+unix:///?socket=$work/kit.sock"
echo "preconditioning the card: random 4 KiB writes, twice its size..." >&2
fio --name=pre --ioengine=nbd --uri="$card" --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 \
    --size="$size" --loops=2 --norandommap --randrepeat=0 --group_reporting --output-format=terse >"$work/pre.out"
echo "size $size bytes; fio nbd engine, 4 KiB, 2 jobs x QD 16, 15 s"
for rw in randread randwrite; do
    k=$(job "$kit" "$rw" 15 "")
    c=$(job "$card" "$rw" 15 "")
    echo "$rw: nbdkit memory $k IOPS; flashlab serve --timing none $c IOPS"
done
grep -E "connection closed" "$work/serve.log" | tail -1 >&2 || true
