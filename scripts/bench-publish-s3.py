#!/usr/bin/env python3
"""passforge publish s3:// benchmark: one run, release build, against a local SeaweedFS.

Builds N passes (default 100,000, one template, scripts/bench-build.py's generator) with the
real `passforge` binary, publishes them to s3://BUCKET/PREFIX on the store of
scripts/with-seaweedfs.sh (started here when PASSFORGE_TEST_S3_ENDPOINT is not set), then
changes one pass, rebuilds, and times `passforge publish s3://…`.
Target: < 2 s for the publish of one changed pass among N.

Also printed, for scale: the first publish of all N passes (every name an object of its own),
and a publish with nothing to send. The last publish is checked in the bucket: the state and the
changed pass under its three names match the local build, with their Content-Type.

Usage: scripts/bench-publish-s3.py [--passes N] [--binary PATH] [--concurrency N]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # importing the shared helper leaves no __pycache__ either
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_SECONDS = 2.0
SECRET = "benchmark-secret-0123456789"


def store_environment():
    """The AWS_* variables for scripts/with-seaweedfs.sh's store."""
    return {"AWS_ENDPOINT_URL": os.environ["PASSFORGE_TEST_S3_ENDPOINT"],
            "AWS_REGION": os.environ.get("PASSFORGE_TEST_S3_REGION", "us-east-1"),
            "AWS_ACCESS_KEY_ID": os.environ["PASSFORGE_TEST_S3_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": os.environ["PASSFORGE_TEST_S3_SECRET_ACCESS_KEY"]}


def run(binary, root, arguments, timeout, extra=None):
    """Runs passforge in the project; returns (seconds, last line of its output)."""
    env = dict(os.environ, PASSFORGE_TOKEN_SECRET=SECRET, **(extra or {}))
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


def fetch(key):
    """GET of one object with curl's own SigV4 (credentials on its standard input): (body, content type)."""
    env = store_environment()
    url = f"{env['AWS_ENDPOINT_URL']}/{os.environ['PASSFORGE_TEST_S3_BUCKET']}/{key}"
    config = f'user = "{env["AWS_ACCESS_KEY_ID"]}:{env["AWS_SECRET_ACCESS_KEY"]}"\n'
    done = subprocess.run(["curl", "-sf", "-K", "-", "--aws-sigv4", f"aws:amz:{env['AWS_REGION']}:s3",
                           "-D", "/dev/stderr", url], input=config.encode(), capture_output=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"GET {url} failed (curl {done.returncode})")
    headers = done.stderr.decode(errors="replace").lower().splitlines()
    content_type = next((h.split(":", 1)[1].strip() for h in headers if h.startswith("content-type:")), "")
    return done.stdout, content_type


def check_published(root, prefix, key):
    """The bucket has the local build's state, and the pass `key` under its three names with the local bytes."""
    import json
    local_bytes = open(f"{root}/output/.passforge/state.json", "rb").read()
    if fetch(f"{prefix}/.passforge/state.json")[0] != local_bytes:
        sys.exit(f"the bucket's {prefix}/.passforge/state.json differs from output/'s")
    record = json.loads(local_bytes)["passes"][key]
    local = open(f"{root}/output/v1/passes/{key}", "rb").read()
    for path in (f"v1/passes/{key}", record["tokenPath"], record["downloadPath"]):
        body, content_type = fetch(f"{prefix}/{path}")
        if body != local or content_type != "application/vnd.apple.pkpass":
            sys.exit(f"{prefix}/{path} differs from output/v1/passes/{key} ({content_type})")


def measure(binary, n, scratch, concurrency):
    """Returns [(measure, seconds, passforge's summary)], the last being the targeted one."""
    bench = load_script("bench-build")
    root = os.path.join(scratch, "project")
    prefix = f"bench-{os.getpid()}"
    dest = f"s3://{os.environ['PASSFORGE_TEST_S3_BUCKET']}/{prefix}"
    extra = dict(store_environment(), PASSFORGE_S3_CONCURRENCY=str(concurrency))
    bench.write_project(root, n, "list")
    rows = [("full build", *run(binary, root, ["build", "--quiet", "--development-signing"], 1800))]
    rows.append(("first publish", *run(binary, root, ["publish", dest, "--quiet"], 3600, extra)))
    key = f"pass.com.example.bench/M-{n // 2:06d}"
    rows.append(("publish, nothing new", *run(binary, root, ["publish", dest, "--quiet"], 300, extra)))
    bench.write_content(root, n, "list", changed=n // 2)
    rows.append(("one-pass rebuild", *run(binary, root, ["build", "--quiet", "--development-signing"], 600)))
    rows.append(("publish, one changed", *run(binary, root, ["publish", dest, "--quiet"], 300, extra)))
    check_published(root, prefix, key)
    return rows


def report(rows, n):
    for name, seconds, summary in rows:
        print(f"  {name + ':':<23}{seconds:8.3f} s   ({summary})")
    seconds = rows[-1][1]
    print(f"\n  {'measure':<38}{'result':>9}  target")
    print(f"  {f'publish s3://, 1 of {n:,} passes changed':<38}{seconds:>7.3f} s  < {TARGET_SECONDS:g} s  "
          + ("ok" if seconds < TARGET_SECONDS else "MISSED"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passes", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight (PASSFORGE_S3_CONCURRENCY)")
    parser.add_argument("--binary", default=os.path.join(HERE, "..", ".build", "release", "passforge"))
    args = parser.parse_args()
    if not os.environ.get("PASSFORGE_TEST_S3_ENDPOINT"):
        # No store yet: run again under scripts/with-seaweedfs.sh, which starts one and stops it at the end.
        os.execv(os.path.join(HERE, "with-seaweedfs.sh"), [os.path.join(HERE, "with-seaweedfs.sh"), sys.executable] + sys.argv)
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build -c release --product passforge` first (or `make bench`)")
    scratch = tempfile.mkdtemp(prefix="passforge-bench-publish-s3-")
    try:
        print(f"passforge publish s3:// benchmark: {args.passes:,} passes to SeaweedFS at "
              f"{os.environ['PASSFORGE_TEST_S3_ENDPOINT']}, {args.concurrency} requests in flight, {os.cpu_count()} cores")
        report(measure(binary, args.passes, scratch, args.concurrency), args.passes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
