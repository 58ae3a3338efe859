#!/usr/bin/env bash
# Runs every command of the README's command blocks as written, in a
# scratch directory, with a release build of flashlab first on PATH:
# the two commands, the tour (in its order; `serve` in the background
# until the next `serve` or the end, `monitor` for 3 seconds) and the
# served card's file system and database walk-through (as root: nbdfuse
# and a loop mount). What a command needs that the README assumes is made
# first: `mycard.toml` (the FlashMAX II's profile under another id), `mine.toml`
# (the README's example of it, for `fit`), and `docs/sweeps/` for `sweep`.
#
#   scripts/readme-commands.sh [--skip-long]
#
# Then every example of every command's --help (`flashlab CMD --help`,
# its "Examples:" lines), in the order `flashlab --help` lists the
# commands, in the same directory after the tour (the `serve` example
# serves the card the `control`, `status`, `monitor`, `format`,
# `volumes` and `beacon` examples tell things to; `replay`'s replays the
# tour's card.trace), each line once.
#
# --skip-long leaves out the commands that take minutes and that the test
# suite holds at a smaller size (`calibrate`, `bench`, `endurance` at full
# or default size), naming them; CI runs it so. Ends with the line
# "N passed, M failed"; exit status 0 only if none failed.
# FLASHLAB_PROFILE names the Cargo profile of the build it runs (default
# release, what `cargo install` gives; CI passes `suite`, the test
# suite's build).
# The walk-through needs Debian's libnbd-bin (nbdfuse), fuse3, e2fsprogs
# and sqlite3, and root (a loop mount).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
skip_long=0
[ "${1:-}" = "--skip-long" ] && skip_long=1
profile="${FLASHLAB_PROFILE:-release}"
cargo build --profile "$profile" --manifest-path "$root/Cargo.toml" -q -p flashlab || exit 2
export PATH="$root/target/$profile:$PATH"
work="$(mktemp -d /tmp/flashlab-readme.XXXXXX)"
cd "$work"
cleanup() {
    fusermount3 -u export 2>/dev/null
    umount fs 2>/dev/null
    kill $(jobs -p) 2>/dev/null
    wait 2>/dev/null
    cd / && rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
server=""

# The lines of the README's ```sh blocks, in order, block by block
# (blocks separated by a line "--block--").
blocks() {
    awk '/^```sh$/ {on=1; next} /^```$/ && on {on=0; print "--block--"; next} on {print}' "$root/README.md"
}

long() {
    case "$1" in
    "flashlab calibrate flashmax2" | "flashlab bench" | "flashlab endurance p420m") return 0 ;;
    esac
    return 1
}

started=$EPOCHREALTIME
record() { # status command: its wall time since `started`
    local took
    took=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%6.1f s", b - a }')
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok      $took  $2"
    else
        failed=$((failed + 1))
        echo "FAILED  $took  $2 (exit $1)"
    fi
    started=$EPOCHREALTIME
}

stop_server() {
    if [ -n "$server" ]; then
        kill -TERM "$server" 2>/dev/null
        wait "$server" 2>/dev/null
        server=""
    fi
}

one() { # a tour line: one flashlab command and perhaps a comment
    started=$EPOCHREALTIME
    local cmd="${1%%  #*}"
    cmd="${cmd%"${cmd##*[![:space:]]}"}"
    if [ "$skip_long" = 1 ] && long "$cmd"; then
        echo "skipped $cmd (--skip-long)"
        return
    fi
    case "$cmd" in
    "flashlab serve "*)
        stop_server
        # exec: $! is the server itself, not a subshell a TERM would
        # leave it orphaned by.
        eval "exec $cmd" 2>serve.log &
        server=$!
        local sock
        sock=$(echo "$cmd" | sed -n 's/.*--unix \([^ ]*\).*/\1/p')
        for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
        python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$sock" 2>/dev/null
        record $? "$cmd"
        return
        ;;
    "flashlab fit "*"--figures mine.toml"*)
        # The README's own example of the file (its ```toml block).
        awk '/^```toml$/ {on=1; next} /^```$/ && on {exit} on {print}' "$root/README.md" >mine.toml
        ;;
    "flashlab sweep "*"docs/sweeps/"*)
        mkdir -p docs/sweeps && cp "$root"/docs/sweeps/*.toml docs/sweeps/
        ;;
    "flashlab run ./mycard.toml"*)
        sed 's/^id = .*/id = "mycard"/' "$root/devices/flashmax2.toml" >mycard.toml
        ;;
    "flashlab monitor "*)
        timeout 3 bash -c "$cmd" >monitor.out 2>&1 </dev/null
        local s=$?
        [ "$s" -eq 124 ] && s=0
        record "$s" "$cmd"
        return
        ;;
    esac
    bash -c "$cmd" >out.log 2>&1 </dev/null
    local s=$?
    [ "$s" -ne 0 ] && tail -5 out.log
    # A tour command's figures must mean something: none of an empty card.
    if [ "$s" -eq 0 ] && grep -q "never-written LBA\|the card was fresh" out.log; then
        grep "never-written LBA\|the card was fresh" out.log | head -2
        s=3
    fi
    record "$s" "$cmd"
}

block=()
while IFS= read -r line; do
    if [ "$line" = "--block--" ]; then
        if printf '%s\n' "${block[@]}" | grep -q '^nbdfuse'; then
            # The served card's walk-through: a shell session, run whole,
            # on a new store (the tour's card was formatted and split).
            stop_server
            rm -rf card card.sock
            printf '%s\n' "${block[@]}" >walk.sh
            started=$EPOCHREALTIME
            timeout 300 bash -e walk.sh >walk.log 2>&1
            s=$?
            [ "$s" -ne 0 ] && tail -20 walk.log
            grep -q '^42$' walk.log || { echo "walk-through: SQLite did not give back 42"; s=1; }
            record "$s" "the served card's walk-through (serve, nbdfuse, ext4, SQLite, kill -9, mount again)"
            pkill -f "flashlab serve p420m --scale 8192 --store card" 2>/dev/null
            for _ in $(seq 50); do pgrep -f "flashlab serve p420m --scale 8192 --store card" >/dev/null || break; sleep 0.1; done
            rm -rf card export fs card.sock
        else
            for l in "${block[@]}"; do
                case "$l" in
                flashlab\ *) one "$l" ;;
                scripts/test.sh* | cargo\ test*) ;; # the tests: what .ci/run runs
                "" | "#"* | git\ * | cargo\ install* | cd\ *) ;;
                *) echo "not run: $l" ;;
                esac
            done
            stop_server
        fi
        block=()
        continue
    fi
    block+=("$line")
done < <(blocks)
# The commands and subcommands, by path ("run", "sweep plan"), in the
# order of `flashlab --help`.
subcommands() { # [command]
    flashlab ${1:-} --help | awk '/^Commands:$/ {on=1; next} /^$/ {on=0} on && $1 != "help" {print $1}'
}
commands() {
    for c in $(subcommands); do
        echo "$c"
        for s in $(subcommands "$c"); do echo "$c $s"; done
    done
}

echo "--- the --help examples"
stop_server
rm -rf card card.sock
for c in $(commands | tr ' ' '+'); do
    flashlab ${c//+/ } --help | awk '/^Examples:$/ {on=1; next} on && /^  flashlab / {sub(/^  /, ""); print; next} on {on=0}'
done | awk '!seen[$0]++' >examples.txt
[ -s examples.txt ] || { echo "no --help examples found"; failed=$((failed + 1)); }
while IFS= read -r l <&3; do one "$l"; done 3<examples.txt
stop_server

echo "$passed passed, $failed failed"
trap - EXIT
cleanup
[ "$failed" -eq 0 ] || exit 1
