#!/usr/bin/env bash
# A database-like load captured on one served card and replayed on every
# catalog card and format, ranked. The load (fio, its nbd engine): an
# InnoDB-like pattern of 16 KiB pages read and written at random, 70/30,
# 4 jobs x QD 4, beside a redo log: 4 KiB sequential writes, each
# followed by a flush (fsync: fio's nbd engine has no fdatasync), for 10 s on the P420m at scale 8192
# served with its model's timing (`serve --trace`). The capture is then
# replayed at its recorded times on the four cards in every format, from
# a filled card, with the ranking and a chart.
#
#   scripts/trace-ranking.sh [OUT]     (default: trace-ranking/: the
#                                       capture, ranking.txt, rank.svg)
#
# Needs fio and nbdinfo (Debian packages) and a release build of flashlab.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
out="${1:-trace-ranking}"
device=p420m scale=8192
work="$(mktemp -d /tmp/flashlab-trace.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib.sh"
mkdir -p "$out"

serve model --trace "$out/oltp.trace"
uri="nbd+unix:///$device?socket=$work/card.sock"
fio --output-format=terse --ioengine=nbd --uri="$uri" --time_based --runtime=10 \
    --name=pages --rw=randrw --rwmixread=70 --bs=16k --iodepth=4 --numjobs=4 --size=128m \
    --name=redo --rw=write --bs=4k --iodepth=1 --fsync=1 --offset=128m --size=16m >"$work/fio.out"
kill -TERM "$pid"; wait "$pid" || true
"$flashlab" replay "$out/oltp.trace" all --format all --scale "$scale" --chart "$out/rank.svg" -q | tee "$out/ranking.txt"
