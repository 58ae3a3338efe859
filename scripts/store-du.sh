#!/usr/bin/env bash
# Disk use of a served card's store against the bytes written to it: a
# fresh card for each pattern and amount (fio's nbd engine, random 4 KiB
# or sequential 1 MiB writes, QD 16), the store's allocated bytes (du, not
# its apparent size) after a sync, beyond what the fresh store took (its
# out-of-band areas, erase counts and trim journal: the fixed metadata).
# Prints one line per pattern and amount.
#
#   scripts/store-du.sh [DEVICE] [SCALE]    (default flashmax2 1024: a 2.1 GB export)
#
# Needs fio and nbdinfo (Debian packages) and a release build of flashlab.
set -euo pipefail
device="${1:-flashmax2}"
scale="${2:-1024}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
work="$(mktemp -d /tmp/flashlab-store-du.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
allocated() { sync; du -B1 -s "$1" | cut -f1; }
mb() { python3 -c "print(f'{$1 / 1e6:,.1f} MB')"; }

for pattern in "randwrite 4k" "write 1m"; do
    set -- $pattern
    for amount in 64m 1g all; do
        rm -rf "$work/store" "$work/card.sock"; sleep 0.2
        "$flashlab" serve "$device" --scale "$scale" --store "$work/store" --unix "$work/card.sock" --timing none 2>"$work/serve.log" &
        pid=$!
        uri="nbd+unix:///$device?socket=$work/card.sock"
        for _ in $(seq 300); do nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.1; done
        size=$(nbdinfo --size "$uri") || { cat "$work/serve.log" >&2; exit 1; }
        fresh=$(allocated "$work/store")
        [ "$amount" = all ] && amount=$size
        fio --name=w --ioengine=nbd --uri="$uri" --rw="$1" --bs="$2" --iodepth=16 --size="$amount" \
            --norandommap --randrepeat=0 --output-format=json 2>/dev/null | sed -n '/^{/,$p' >"$work/fio.json"
        written=$(python3 -c "import json; print(json.load(open('$work/fio.json'))['jobs'][0]['write']['io_bytes'])")
        used=$(( $(allocated "$work/store") - fresh ))
        echo "$1 bs=$2: written $(mb "$written"), store $(mb "$used") beyond the fresh store's $(mb "$fresh") ($(python3 -c "print(f'{$used / $written:.2f}')")x)"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
done
echo "$device --scale $scale, export $(mb "$size"); flashlab $("$flashlab" --version | cut -d' ' -f2)"
