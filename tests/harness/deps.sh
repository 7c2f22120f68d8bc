#!/bin/sh
# Install the Debian packages that are missing: each is checked with
# dpkg-query (a few milliseconds each, so make runs this every time), and
# only the missing ones are installed, without their recommends.
#
# usage: deps.sh PACKAGE...
# environment: SUDO (sudo when not root, else empty), DEPS_TIMEOUT
# (seconds apt-get install may take, default 3600; apt-get update: 600).
set -u

missing=
for p; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "deps: installing$missing"
${SUDO:-} timeout 600 apt-get update -q >/dev/null ||
	{ echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086 # a list of packages on purpose
${SUDO:-} timeout "${DEPS_TIMEOUT:-3600}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends $missing >/dev/null ||
	{ echo "deps: could not install:$missing (see apt-get output above)" >&2; exit 1; }
