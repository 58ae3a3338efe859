#!/usr/bin/env bash
# The lab on real storage beside a plain fio run of the same job, one
# after the other, three times: 4 KiB random read, 2 jobs x QD 16, 30 s,
# libaio with O_DIRECT, on a 1 GiB file of random bytes (made beside
# this script's checkout unless FILE is given; read only).
#
#   scripts/measure-vs-fio.sh [FILE]
#
# Needs fio (Debian package) and a release build of flashlab.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
file="${1:-}"
if [ -z "$file" ]; then
    work="$(mktemp -d "$root/target/measure-vs-fio.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    file="$work/target.img"
    head -c $((1 << 30)) /dev/urandom > "$file"
fi
echo "4 KiB random read, 2 jobs x QD 16, 30 s, on $file"
for i in 1 2 3; do
    fio --name=plain --filename="$file" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=16 --numjobs=2 \
        --norandommap --randrepeat=0 --refill_buffers --group_reporting --time_based --runtime=30 --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print("plain fio: %.0f IOPS, avg %.4f ms" % (j["iops"], j["lat_ns"]["mean"]/1e6))'
    "$flashlab" run --target "$file" --workload 4k-read --threads 2 --qd 16 --interval 10 --duration 30 -q |
        awk '/^  read/ {printf "flashlab run --target: %s IOPS, avg %s ms\n", $2, $4}'
done
