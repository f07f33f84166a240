#!/usr/bin/env python3
"""passforge publish benchmark: one run, release build.

Builds N passes (default 10,000, one template, scripts/bench-build.py's
generator) with the real `passforge` binary, publishes them to a local folder,
then changes one pass, rebuilds, and times `passforge publish DEST`.
Target: <= 1 s for the publish of one changed pass among N.

Also printed, for scale: the first publish of all N passes, and a publish
with nothing to send. Every publish is checked at DEST: the state, the pass
bytes and its token-keyed name match the local build.

Usage: scripts/bench-publish.py [--passes N] [--binary PATH]
"""
import argparse, filecmp, json, os, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # importing the shared helper leaves no __pycache__ either
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_SECONDS = 1.0
SECRET = "benchmark-secret-0123456789"


def run(binary, root, arguments, timeout):
    """Runs passforge in the project; returns (seconds, last line of its output)."""
    env = dict(os.environ, PASSFORGE_TOKEN_SECRET=SECRET)
    env.pop("CI", None)
    start = time.monotonic()
    try:
        done = subprocess.run([binary] + arguments, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"passforge {' '.join(arguments)} took more than {timeout} s")
    elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"passforge {' '.join(arguments)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout.strip().splitlines()[-1]


def check_published(root, dest, key):
    """DEST has the local build's state, and the pass `key` under both its names with the local bytes."""
    local = json.load(open(f"{root}/output/.passforge/state.json"))
    remote = json.load(open(f"{dest}/.passforge/state.json"))
    if remote["lastUpdateTag"] != local["lastUpdateTag"] or remote["passes"][key] != local["passes"][key]:
        sys.exit(f"publish left {dest} with another build state than output/ for {key}")
    record = local["passes"][key]
    for path in (f"v1/passes/{key}", record["tokenPath"], record["downloadPath"]):
        if not filecmp.cmp(f"{root}/output/{path}", f"{dest}/{path}", shallow=False):
            sys.exit(f"publish left {dest}/{path} different from output/{path}")


def measure(binary, n, scratch):
    """Returns [(measure, seconds, passforge's summary)], the last being the targeted one."""
    bench = load_script("bench-build")
    root, dest = os.path.join(scratch, "project"), os.path.join(scratch, "dest")
    bench.write_project(root, n, "list")
    rows = [("full build", *run(binary, root, ["build", "--quiet", "--development-signing"], 1200))]
    rows.append(("first publish", *run(binary, root, ["publish", dest, "--quiet"], 600)))
    key = f"pass.com.example.bench/M-{n // 2:06d}"
    check_published(root, dest, key)
    rows.append(("publish, nothing new", *run(binary, root, ["publish", dest, "--quiet"], 300)))
    bench.write_content(root, n, "list", changed=n // 2)
    rows.append(("one-pass rebuild", *run(binary, root, ["build", "--quiet", "--development-signing"], 600)))
    rows.append(("publish, one changed", *run(binary, root, ["publish", dest, "--quiet"], 300)))
    check_published(root, dest, key)
    return rows


def report(rows, n):
    for name, seconds, summary in rows:
        print(f"  {name + ':':<23}{seconds:8.3f} s   ({summary})")
    seconds = rows[-1][1]
    print(f"\n  {'measure':<38}{'result':>9}  target")
    print(f"  {f'publish, 1 of {n:,} passes changed':<38}{seconds:>7.3f} s  <= {TARGET_SECONDS:g} s  "
          + ("ok" if seconds <= TARGET_SECONDS else "MISSED"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passes", type=int, default=10_000)
    parser.add_argument("--binary", default=os.path.join(HERE, "..", ".build", "release", "passforge"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build -c release --product passforge` first (or `make bench`)")
    scratch = tempfile.mkdtemp(prefix="passforge-bench-publish-")
    try:
        print(f"passforge publish benchmark: {args.passes:,} passes to a local folder, {os.cpu_count()} cores")
        report(measure(binary, args.passes, scratch), args.passes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
