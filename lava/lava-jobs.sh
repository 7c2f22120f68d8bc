#!/bin/sh
# Generate the LAVA job definitions, one per cell of policy/matrix, into
# build/lava/jobs/<cell>.yaml (and <cell>.expect.json, what a complete run
# must report).  Arguments go to lava/make-jobs.py, e.g.
#   lava/lava-jobs.sh --base-url https://files.example.org/sanitize_mem --accel kvm --sha256
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$top/lava/make-jobs.py" --out "${LAVA_JOBS:-$top/build/lava/jobs}" "$@"
