#!/usr/bin/env bash
# The reference runs: seeded results that a change which should not move
# any figure must leave byte-identical. Four cards, each with a workload
# of its own, at scale 128 with preconditioning, a run through a die
# failure, an aged card's reads, and a review; every results file written
# with --json into OUT.
#
#   scripts/reference-runs.sh FLASHLAB OUT
#
# Compare two builds: run it with each binary into its own directory,
# then `diff -r OUT1 OUT2` (no output: identical).
set -euo pipefail
bin="$1"
out="$2"
mkdir -p "$out"
run() { # name, arguments
    local name="$1"
    shift
    "$bin" run "$@" --seed 1 --json "$out/$name.json" -q >/dev/null
}
run flashmax2-4k-write flashmax2 --scale 128 --workload 4k-write --precondition
run iodrive2-duo-8k-7030 iodrive2-duo --scale 128 --workload 8k-7030 --precondition
run p420m-fileserver p420m --scale 128 --workload fileserver --precondition
run mx6300-webserver mx6300 --scale 128 --workload webserver --precondition
run flashmax2-fail-die flashmax2 --scale 128 --workload 4k-write --precondition --fail-die 3.1@1 --duration 6 --interval 0.25
run p420m-aged-reads p420m --scale 128 --workload 4k-read --precondition --threads 4 --qd 8 --ios 200000 --pe-cycles 3000 --age-days 90
run p420m-random-faults p420m --scale 128 --workload 8k-7030 --duration 10 --random-faults 2e8
"$bin" review flashmax2 --scale 128 --profiles 4k,8k7030,fileserver --out "$out/review" -q >/dev/null
# The report and charts hold only what results.json holds; compare that
# and the CSV tables.
rm -rf "$out/review/charts" "$out/review/report.html"
echo "reference runs written to $out"
