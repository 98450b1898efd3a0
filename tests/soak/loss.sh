#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: t_loss's random kills (writers, controller and keeper SIGKILLed at
# random, 4 processes x 4 threads) for ROUNDS rounds in one run; every
# event posted must be in the log or in its lost count unless the log is
# cut short.  `make check` runs 10 rounds.
# Usage: sh tests/soak/loss.sh [BUILD_DIR [ROUNDS]]   (defaults: build, 100)
BUILD=${1:-build}
ROUNDS=${2:-100}
prog=$BUILD/tests/t_loss
[ -x "$prog" ] || { echo "no $prog: run make BUILD=$BUILD all tests first" >&2; exit 2; }
case $ROUNDS in ''|*[!0-9]*) echo "usage: $0 [BUILD_DIR [ROUNDS]]" >&2; exit 2;; esac
export PT_TEST_HELPERS="$BUILD/tests/helpers"
export PT_LOSS_ROUNDS=$ROUNDS
start=$(date +%s)
CK_RUN_CASE=keeper_killed "$prog"; rc=$?
echo "loss soak: $ROUNDS rounds, exit $rc after $(( $(date +%s) - start )) s"
exit $rc
