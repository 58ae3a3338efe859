#!/usr/bin/env bash
# A full-size card served: start on a new store, 1 GB of random 4 KiB
# writes through fio's nbd engine, a clean stop, a mount from the clean
# stop's checkpoint, then a kill -9 and a mount by scan; the page cache
# dropped before each mount (needs root). Prints each time, the server's
# memory (VmHWM) and the store's disk use.
#
#   scripts/full-size-mount.sh [DEVICE]     (default flashmax2; about 5
#                                            minutes and 26 GB of disk)
#
# Needs fio and libnbd-bin (Debian packages) and a release build of flashlab
# (or FLASHLAB=path/to/flashlab).
set -euo pipefail
device="${1:-flashmax2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="${FLASHLAB:-$root/target/release/flashlab}"
work="$(mktemp -d /tmp/flashlab-full-size.XXXXXX)"
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
uri="nbd+unix:///$device?socket=$work/card.sock"

since() { python3 -c "print(f'{$(date +%s.%N) - $1:.1f}')"; }
start() { # until the export answers: its pid in $pid, the seconds in $took
    rm -f "$work/card.sock"
    local t0; t0=$(date +%s.%N)
    "$flashlab" serve "$device" --store "$work/store" --unix "$work/card.sock" --timing none >/dev/null 2>>"$work/serve.log" &
    pid=$!
    until nbdinfo --size "$uri" >/dev/null 2>&1; do sleep 0.2; done
    took=$(since "$t0")
}
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
hwm() { grep VmHWM "/proc/$pid/status" | awk '{printf "%.1f GB", $2 / 1048576}'; }

echo "$device at full size, store $work/store"
start
echo "start on a new store: $took s until the export answers; memory $(hwm) peak"
echo "disk, new: $(du -sh "$work/store" | cut -f1)"
fio --name=w --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 --io_size=512m \
    --norandommap --randrepeat=0 --group_reporting --output-format=terse --terse-version=3 | awk -F';' '$49 != "" {printf "1 GB of random 4 KiB writes: %s IOPS\n", $49}'
echo "disk after: $(du -sh "$work/store" | cut -f1)"
t0=$(date +%s.%N); kill -TERM "$pid"; wait "$pid" || true
echo "clean stop: $(since "$t0") s"
drop_caches
start
echo "mount after the clean stop (page cache dropped): $took s; memory $(hwm) peak"
grep -o "mounted[^;]*" "$work/serve.log" | tail -1 || true
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
drop_caches
start
echo "mount after kill -9 (page cache dropped): $took s; memory $(hwm) peak"
grep -o "mounted[^;]*" "$work/serve.log" | tail -1 || true
kill -TERM "$pid"; wait "$pid" || true
