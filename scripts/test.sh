#!/usr/bin/env bash
# The tests, on any Debian or Ubuntu machine with the Rust toolchain:
# installs the Debian packages the tests drive (as root, or through sudo,
# naming each and why), then runs the whole suite. `.ci/run` calls this
# same script after its format and lint checks.
#
#   scripts/test.sh [arguments of cargo nextest run, or of cargo test without it...]
#
# The tests drive real programs, from Debian's packages: the review test
# renders the report in headless Chromium and checks the exported fio
# jobs with fio; the serve tests drive a served card with fio's nbd
# engine, qemu-img, nbdinfo/nbdfuse/nbdcopy (a loop-mounted ext4 with
# SQLite on it) and nbdkit (the speed benchmark's reference); the
# management tests scrape the monitor with curl and look at its screen in
# tmux; the lab on real storage runs fio on a file, a loop device
# (losetup, blkdiscard, blkid) and an NBD export; the application test
# runs MariaDB (a server of its own, never the system's) and sysbench on
# ext4 on a served card; the sweep test starts a single-node Slurm of its
# own (munge, slurmctld, slurmd, sbatch); the TLS test makes its
# certificates with openssl.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "scripts/test.sh: cargo is not on PATH: install the Rust toolchain (https://rustup.rs) first" >&2
    exit 1
fi

# program:package:why
needs=(
    "chromium:chromium:renders the review's report (layout checked)"
    "fio:fio:runs the exported fio jobs and the lab on real storage"
    "qemu-img:qemu-utils:an NBD client of the served card"
    "nbdfuse:libnbd-bin:mounts the served card (nbdinfo, nbdcopy too)"
    "nbdcopy:libnbd-bin:copies to and from the served card"
    "nbdkit:nbdkit:the served card's speed reference"
    "fusermount3:fuse3:nbdfuse's mounts"
    "mkfs.ext4:e2fsprogs:a real file system on the served card"
    "sqlite3:sqlite3:a database on that file system"
    "curl:curl:scrapes the monitor's Prometheus endpoint"
    "tmux:tmux:looks at the monitor's screen"
    "losetup:mount:a loop device for the lab on real storage"
    "blkdiscard:util-linux:discards a loop device"
    "blkid:util-linux:checks what a target holds"
    "mariadbd:mariadb-server:SysBench's database (a server of the test's own)"
    "sysbench:sysbench:SysBench OLTP"
    "munged:munge:Slurm's authentication"
    "slurmctld:slurmctld:a single-node Slurm for the sweep test"
    "slurmd:slurmd:a single-node Slurm for the sweep test"
    "sbatch:slurm-client:submits the sweep's job array"
    "openssl:openssl:makes the TLS test's certificates"
)
missing=()
for n in "${needs[@]}"; do
    program="${n%%:*}"; rest="${n#*:}"; package="${rest%%:*}"; why="${rest#*:}"
    if ! command -v "$program" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$program" ]; then
        echo "scripts/test.sh: needs $program (Debian's $package): $why"
        missing+=("$package")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "scripts/test.sh: not root and no sudo: install these as root, then run this again: apt-get install $packages" >&2
            exit 1
        fi
        sudo="sudo"
    fi
    echo "scripts/test.sh: installing $packages"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $packages
fi

# Every test binary runs even when one fails; the failures are listed at
# the end. The `suite` profile is the release build's optimisation,
# quicker to build (Cargo.toml).
# The suite, on its own build profile: with cargo-nextest where it is
# installed (each test in its own process, both cores kept busy across the
# test binaries; its settings in .config/nextest.toml), then the doc
# tests, which nextest does not run; else with cargo test.
# (`--no-run` builds them only.)
if cargo nextest --version >/dev/null 2>&1; then
    case " $* " in
    *" --no-run "*) exec cargo nextest run --cargo-profile suite --workspace "$@" ;;
    esac
    cargo nextest run --cargo-profile suite --workspace --no-fail-fast "$@"
    cargo test --profile suite --workspace --doc
else
    exec cargo test --profile suite --workspace --no-fail-fast "$@"
fi
