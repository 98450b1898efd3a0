#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what the tests need (Debian packages), when it is missing.
# Required: Check (the unit-test framework) and pkg-config.  Wanted: python3,
# babeltrace2 and protoc from protobuf-compiler (the posixtrace command's
# tests: CTF read back, Perfetto traces decoded), groff (the reference
# pages' check), setcap from libcap2-bin (the isolation test's
# file-capability program), make (the workload test's build), libdw-dev
# (the command's symbols for addresses, tools/symbolize.c; without it the
# command is built without them), g++ (libstdc++'s demangler for the
# command, and the C++ program of the demangling checks), libcurl4-openssl-dev and
# zlib1g-dev (posixtrace export's OTLP/HTTP client and gzip; without them the
# command is built without sending), libzstd-dev and the zstd program
# (convert --to perfetto --compression zstd, and its test's expansion);
# the checks that need them say SKIP
# without them.  apt-get is used when the caller is root;
# otherwise the script says what to install, and fails only for what is
# required.
set -e
need="" want=""
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
pkg-config --exists check 2>/dev/null || need="$need check"
command -v python3 >/dev/null 2>&1 || want="$want python3"
command -v babeltrace2 >/dev/null 2>&1 || want="$want babeltrace2"
command -v protoc >/dev/null 2>&1 || want="$want protobuf-compiler"
command -v groff >/dev/null 2>&1 || want="$want groff-base"
command -v setcap >/dev/null 2>&1 || [ -x /sbin/setcap ] || want="$want libcap2-bin"
command -v make >/dev/null 2>&1 || want="$want make"
pkg-config --exists libdw 2>/dev/null || want="$want libdw-dev"
command -v g++ >/dev/null 2>&1 || want="$want g++"
pkg-config --exists libcurl 2>/dev/null || want="$want libcurl4-openssl-dev"
pkg-config --exists zlib 2>/dev/null || want="$want zlib1g-dev"
pkg-config --exists libzstd 2>/dev/null || want="$want libzstd-dev"
command -v zstd >/dev/null 2>&1 || want="$want zstd"
[ -z "$need$want" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: installing$need$want" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq $need $want >/dev/null
	exit 0
fi
[ -n "$want" ] && echo "install-deps: for every test also install:$want" >&2
if [ -n "$need" ]; then
	echo "install-deps: missing:$need; run: sudo apt-get install$need" >&2
	exit 1
fi
