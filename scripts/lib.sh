# Shared by the scripts that serve a card: source it after setting
# flashlab, device, scale and work.
#
#   serve TIMING [EXTRA...]   flashlab serve "$device" at "$scale" from
#                             "$work/store" on "$work/card.sock" with
#                             --timing TIMING; its pid in $pid, its log in
#                             "$work/serve.log"; returns once the export
#                             answers.
serve() {
    rm -f "$work/card.sock"
    "$flashlab" serve "$device" --scale "$scale" --store "$work/store" --unix "$work/card.sock" --timing "$@" 2>>"$work/serve.log" &
    pid=$!
    for _ in $(seq 300); do nbdinfo --size "nbd+unix:///$device?socket=$work/card.sock" >/dev/null 2>&1 && return; sleep 0.1; done
    echo "the server did not start:" >&2; cat "$work/serve.log" >&2; exit 1
}
