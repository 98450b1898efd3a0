#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a file against the rules of the Chrome trace event format that
Perfetto and chrome://tracing rely on, for tests/cli/run.sh.

chrome_check.py FILE.json [--events]
    Exit 0 when: the JSON is valid; it is an object with a "traceEvents"
    list (or a bare list); every event has "ph", "ts" (a number), "pid" and
    "tid"; "B"/"E" events are balanced per thread and properly nested (an
    "E" closes the latest open "B", with the same name when it has one);
    "X" events have "dur" >= 0; "ts" never goes back within a thread
    (metadata events, "ph":"M", excepted).  Otherwise prints what is wrong
    (the first few problems) and exits 1.
    --events: also prints every non-metadata event as "PID TID PH NAME",
    in file order, for a test to look at.
"""
import json
import sys

MAX_PROBLEMS = 5


def check(events):
    problems = []
    stacks = {}
    last_ts = {}
    for n, e in enumerate(events):
        where = "event %d (%s)" % (n, json.dumps(e)[:100])
        missing = [k for k in ("ph", "ts", "pid", "tid") if k not in e]
        if missing:
            problems.append("%s: no %s" % (where, ", ".join(missing)))
            continue
        if not isinstance(e["ts"], (int, float)) or isinstance(e["ts"], bool):
            problems.append("%s: ts is not a number" % where)
            continue
        ph, thread = e["ph"], (e["pid"], e["tid"])
        if ph == "M":
            continue
        if thread in last_ts and e["ts"] < last_ts[thread]:
            problems.append("%s: ts %s before %s on the same thread" % (where, e["ts"], last_ts[thread]))
        last_ts[thread] = e["ts"]
        if ph == "B":
            stacks.setdefault(thread, []).append(e.get("name"))
        elif ph == "E":
            open_ = stacks.get(thread, [])
            if not open_:
                problems.append("%s: E with no open B on its thread" % where)
            else:
                name = open_.pop()
                if "name" in e and e["name"] != name:
                    problems.append("%s: E '%s' closes B '%s' (not nested)" % (where, e["name"], name))
        elif ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                problems.append("%s: X without a duration >= 0" % where)
    for thread, open_ in stacks.items():
        if open_:
            problems.append("thread %s: B never closed: %s" % (thread, open_))
    return problems


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    try:
        with open(sys.argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        print("not valid JSON: %s" % err)
        return 1
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        print("no traceEvents list")
        return 1
    problems = check([e if isinstance(e, dict) else {} for e in events])
    for p in problems[:MAX_PROBLEMS]:
        print(p)
    if "--events" in sys.argv[2:]:
        for e in events:
            if e.get("ph") != "M":
                print(e.get("pid"), e.get("tid"), e.get("ph"), e.get("name"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
