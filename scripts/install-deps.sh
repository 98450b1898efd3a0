#!/bin/sh
# Installs what the tests need (Debian packages), when it is missing.
# Check (the unit-test framework, with pkg-config) is required; it is
# installed with apt-get when the caller is root, else the script says how.
set -e
need=""
pkg-config --exists check 2>/dev/null || need="$need check"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: installing$need" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq $need >/dev/null
else
	echo "install-deps: missing:$need; run: sudo apt-get install$need" >&2
	exit 1
fi
