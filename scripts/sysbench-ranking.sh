#!/usr/bin/env bash
# The reviews' SysBench question in virtual time: SysBench OLTP on MariaDB
# on the served P420m (`flashlab apptest sysbench`, its defaults: scale
# 1024, 8 tables x 100,000 rows, 64 MiB buffer pool, 2 to 32 threads, 60 s
# each), its card's trace then replayed at its recorded times on the four
# catalog cards in every format, from a filled card, ranked, with a chart.
#
#   scripts/sysbench-ranking.sh [OUT] [APPTEST ARGS...]
#       (default OUT: sysbench-ranking/: apptest/ (results, charts, logs,
#        the store and sysbench.trace), ranking.txt, rank.svg)
#
# Needs root, Debian's mariadb-server, sysbench, libnbd-bin and fuse3, and
# a release build of flashlab. About 8 minutes for the test, 2 for the
# replays.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
flashlab="$root/target/release/flashlab"
out="${1:-sysbench-ranking}"
shift || true
scale=1024
mkdir -p "$out"
"$flashlab" apptest sysbench p420m --scale "$scale" --out "$out/apptest" "$@" | tee "$out/apptest.txt"
"$flashlab" replay "$out/apptest/sysbench.trace" all --format all --scale "$scale" --chart "$out/rank.svg" -q | tee "$out/ranking.txt"
