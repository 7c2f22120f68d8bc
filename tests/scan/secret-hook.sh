#!/bin/sh
# The host side of the guest's secret requests (see tests/harness/run-cell.exp):
#
#   secret-hook.sh type CHANNEL SEED   print the secret to type for CHANNEL
#   secret-hook.sh scan SEED [CH=HEX...]  count every channel's secret in
#                                      the guest's RAM file (channel CH:
#                                      the key HEX, which the host cannot
#                                      derive), write the cell's
#                                      lifetime.json and lifetime.txt
#
# environment: RAMSCAN (the scanner), CHANNELS (tests/scan/channels),
# RAMFILE (the guest's RAM), CELL_DIR (the cell's result directory).
set -eu

case "${1:-}" in
type)
	exec "${RAMSCAN:?}" derive "$2" "$3"
	;;
scan)
	seed=$2
	shift 2
	keys=
	for k in "$@"; do
		keys="$keys --key $k"
	done
	# shellcheck disable=SC2086
	exec "${RAMSCAN:?}" --seed "$seed" --channels "${CHANNELS:?}" $keys \
		--json "${CELL_DIR:?}/lifetime.json" "${RAMFILE:?}" \
		> "$CELL_DIR/lifetime.txt"
	;;
*)
	echo "usage: $0 type CHANNEL SEED | scan SEED" >&2
	exit 2
	;;
esac
