#!/usr/bin/env python3
"""passforge build benchmark: one run, release build, figures beside the machine's limit.

Generates N passes of one template in a scratch project and measures, with the
real `passforge` binary:
  - a full build of N passes (passes/s),
  - a no-op rebuild of N passes (s),
  - a rebuild after one pass changed (s),
  - peak memory (max RSS of the build process),
and, in the same run, the machine's RSA-2048 signing floor (`openssl speed`
on all cores), so the ratio to the physical limit is visible.

Usage: scripts/bench-build.py [--passes N] [--binary PATH] [--layout list|files]
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time

TARGETS = {"full": 2500.0, "noop": 1.0, "one": 1.0, "rss": 300.0}

TEMPLATE = """{
  "description": "Benchmark loyalty card",
  "organizationName": "passforge bench",
  "backgroundColor": "rgb(30, 60, 90)",
  "foregroundColor": "rgb(255, 255, 255)",
  "storeCard": {
    "headerFields": [{"key": "tier", "label": "Tier", "value": "{{ tier }}"}],
    "primaryFields": [{"key": "balance", "label": "Balance", "value": "{{ balance }}", "currencyCode": "EUR"}],
    "secondaryFields": [{"key": "name", "label": "Member", "value": "{{ name }}"}],
    "backFields": [{"key": "terms", "label": "Terms", "value": "Points expire after 24 months."}]
  },
  "barcodes": [{"format": "PKBarcodeFormatQR", "message": "{{ serialNumber }}", "messageEncoding": "iso-8859-1"}]
}
"""


def png(width, height):
    import struct, zlib
    raw = b"".join(b"\x00" + b"\x20\x60\xa0" * width for _ in range(height))
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_project(root, n, layout, changed=None):
    os.makedirs(f"{root}/templates/card", exist_ok=True)
    with open(f"{root}/passforge.yml", "w") as f:
        f.write("passTypeIdentifier: pass.com.example.bench\nteamIdentifier: ABCDE12345\n"
                "organizationName: passforge bench\nwebServiceURL: https://passes.example.com/\n")
    with open(f"{root}/templates/card/pass.json", "w") as f:
        f.write(TEMPLATE)
    for name, (w, h) in {"icon.png": (29, 29), "icon@2x.png": (58, 58), "icon@3x.png": (87, 87),
                         "logo.png": (160, 50), "logo@2x.png": (320, 100)}.items():
        with open(f"{root}/templates/card/{name}", "wb") as f:
            f.write(png(w, h))
    write_content(root, n, layout, changed)


def entry(i, changed):
    balance = 1000 if i == changed else i % 500
    return f'  - serialNumber: M-{i:06d}\n    data: {{ name: "Member {i}", balance: {balance} }}\n'


def write_content(root, n, layout, changed=None):
    if layout == "list":
        os.makedirs(f"{root}/content", exist_ok=True)
        with open(f"{root}/content/members.yml", "w") as f:
            f.write("template: card\ndefaults: { data: { tier: Gold } }\npasses:\n")
            f.writelines(entry(i, changed) for i in range(n))
    else:
        for i in range(n) if changed is None else [changed]:
            folder = f"{root}/content/{i // 1000:03d}"
            os.makedirs(folder, exist_ok=True)
            with open(f"{folder}/M-{i:06d}.yml", "w") as f:
                balance = 1000 if i == changed else i % 500
                f.write(f"template: card\nserialNumber: M-{i:06d}\ndata: {{ name: \"Member {i}\", tier: Gold, balance: {balance} }}\n")


def run_build(binary, root):
    env = dict(os.environ, PASSFORGE_TOKEN_SECRET="benchmark-secret-0123456789")
    env.pop("CI", None)
    start = time.monotonic()
    proc = subprocess.Popen([binary, "build", "--quiet", "--development-signing"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.monotonic() - start
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    if status != 0:
        sys.exit(f"build failed:\n{out}\n{err}")
    return elapsed, usage.ru_maxrss / 1024.0, out.strip().splitlines()[-1]


def rsa_floor():
    cores = os.cpu_count() or 1
    def speed(args):
        out = subprocess.run(["openssl", "speed", "-seconds", "3"] + args + ["rsa2048"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("rsa 2048"):
                return float(line.split()[-2])  # sign/s
        return float("nan")
    return speed([]), speed(["-multi", str(cores)]) if cores > 1 else speed([]), cores


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passes", type=int, default=10_000)
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "passforge"))
    parser.add_argument("--layout", choices=["list", "files"], default="list",
                        help="list: one content file with all passes; files: one file per pass")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build -c release --product passforge` first (or `make bench`)")

    root = tempfile.mkdtemp(prefix="passforge-bench-")
    try:
        n = args.passes
        print(f"passforge build benchmark: {n} passes, layout {args.layout}, {os.cpu_count()} cores")
        write_project(root, n, args.layout)
        full, rss_full, summary = run_build(binary, root)
        print(f"  full build:        {full:7.2f} s  {n / full:8.0f} passes/s   ({summary})")
        noop, rss_noop, summary = run_build(binary, root)
        print(f"  no-op rebuild:     {noop:7.3f} s                    ({summary})")
        write_content(root, n, args.layout, changed=n // 2)
        one, rss_one, summary = run_build(binary, root)
        print(f"  one pass changed:  {one:7.3f} s                    ({summary})")
        rss = max(rss_full, rss_noop, rss_one)
        print(f"  peak RSS:          {rss:7.1f} MB")
        single, multi, cores = rsa_floor()
        print(f"  RSA-2048 floor:    {single:7.0f} signatures/s on 1 core, {multi:.0f}/s on {cores} cores (openssl speed)")
        print(f"  full build / floor: {100 * (n / full) / multi:.0f}% of the machine's signing limit")
        print()
        rows = [("full build", f"{n / full:.0f} passes/s", f">= {TARGETS['full']:.0f} passes/s", n / full >= TARGETS["full"]),
                ("no-op rebuild", f"{noop:.3f} s", f"<= {TARGETS['noop']} s", noop <= TARGETS["noop"]),
                ("one-pass rebuild", f"{one:.3f} s", f"<= {TARGETS['one']} s", one <= TARGETS["one"]),
                ("peak RSS", f"{rss:.0f} MB", f"<= {TARGETS['rss']:.0f} MB", rss <= TARGETS["rss"])]
        print(f"  {'measure':<18}{'result':>16}  {'target':<18}")
        for name, value, target, ok in rows:
            print(f"  {name:<18}{value:>16}  {target:<18}{'ok' if ok else 'MISSED'}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
