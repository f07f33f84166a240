#!/usr/bin/env python3
"""passforge soak test: mixed load against `passforge serve` on PostgreSQL for
--minutes N, sampling the server every --sample seconds (default 60):
resident memory (RSS), open file descriptors, PostgreSQL connections of its
database, and p50/p99 latency of the requests of that interval. Draws them as
a PNG (matplotlib) and writes them as JSON.

The load, from --clients threads (default 8), one keep-alive connection each:
registrations (new devices, and existing ones adding a pass), unregistrations,
GET serials, pass GETs (conditional: 304 when the device has the pass, else
200), device logs; and every --build-interval seconds (default 120) one pass's
content changes and `passforge build` runs, which `serve` notices (it rewrites
the index files of the devices holding the pass).

Goals (issue 35): RSS within 10 % and descriptors flat from the end of the
warm-up (minute 10 of 60, a sixth of shorter runs) to the end, p99 flat,
0 errors other than the limits' 4xx, 0 lost (every acknowledged registration
and unregistration is what the database holds at the end).

Usage: scripts/with-postgres.sh sh -c '"$(scripts/test-venv.sh)" scripts/soak.py --minutes 60 \\
           --postgres "$PASSFORGE_TEST_POSTGRES_URL" --out Benchmarks/soak'
"""
import argparse, http.client, json, os, random, shutil, statistics, subprocess, sys, tempfile, threading, time, zipfile

sys.dont_write_bytecode = True
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
bench = load_script("bench-serve")
build_bench = load_script("bench-build")
TYPE = bench.TYPE
PUSH_TOKEN = "5c" * 32


class Ledger:
    """What the server acknowledged, and every answer's status and latency."""

    def __init__(self):
        self.lock = threading.Lock()
        self.registered = {}          # device -> set of serials acknowledged as registered
        self.latencies = []           # (finished at, seconds) since the last sample
        self.statuses = {}
        self.errors = []              # (operation, status or exception), capped

    def record(self, operation, status, seconds):
        with self.lock:
            self.latencies.append(seconds)
            self.statuses[(operation, status)] = self.statuses.get((operation, status), 0) + 1
            if isinstance(status, str) or status >= 500 or (status >= 400 and status not in (404, 429)):
                if len(self.errors) < 50:
                    self.errors.append((operation, status))

    def take_latencies(self):
        with self.lock:
            taken, self.latencies = self.latencies, []
        return taken


class Client:
    """One device-like client on a keep-alive connection; the operations of the mix."""

    def __init__(self, number, port, serials, tokens, ledger, deadline):
        self.number, self.port, self.serials, self.tokens = number, port, serials, tokens
        self.ledger, self.deadline = ledger, deadline
        self.connection = None
        self.devices = []
        self.etags = {}
        self.random = random.Random(number)

    def send(self, operation, method, path, headers=None, body=None):
        started = time.monotonic()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            self.connection.request(method, path, body=body, headers=headers or {})
            response = self.connection.getresponse()
            data = response.read()
            status, answer_headers = response.status, dict(response.getheaders())
            if response.getheader("Connection", "").lower() == "close":
                self.connection.close()
                self.connection = None
        except (OSError, http.client.HTTPException) as error:
            if self.connection is not None:
                self.connection.close()
            self.connection = None
            status, answer_headers, data = type(error).__name__, {}, b""
        self.ledger.record(operation, status, time.monotonic() - started)
        return status, answer_headers, data

    def auth(self, serial):
        return {"Authorization": f"ApplePass {self.tokens[serial]}", "Content-Type": "application/json"}

    def register(self):
        if self.devices and self.random.random() < 0.3:
            device = self.random.choice(self.devices)
        else:
            device = f"soak{self.number}d{len(self.devices):07d}"
            self.devices.append(device)
        serial = self.random.choice(self.serials)
        path = f"/v1/devices/{device}/registrations/{TYPE}/{serial}"
        body = json.dumps({"pushToken": PUSH_TOKEN}).encode()
        status, _, _ = self.send("register", "POST", path, self.auth(serial), body)
        if status in (200, 201):
            with self.ledger.lock:
                self.ledger.registered.setdefault(device, set()).add(serial)

    def unregister(self):
        with self.ledger.lock:
            # The newest devices only: a walk over every device this client made would slow the
            # client down as the run goes on, and the figures would show the client, not the server.
            held = [(d, s) for d in self.devices[-200:] for s in self.ledger.registered.get(d, ())]
        if not held:
            return self.register()
        device, serial = self.random.choice(held)
        status, _, _ = self.send("unregister", "DELETE", f"/v1/devices/{device}/registrations/{TYPE}/{serial}",
                                 self.auth(serial))
        if status == 200:
            with self.ledger.lock:
                self.ledger.registered.get(device, set()).discard(serial)

    def serials_list(self):
        device = self.random.choice(self.devices) if self.devices else f"soak{self.number}none"
        self.send("serials", "GET", f"/v1/devices/{device}/registrations/{TYPE}")

    def pass_get(self):
        serial = self.random.choice(self.serials)
        headers = self.auth(serial)
        if serial in self.etags:
            headers["If-None-Match"] = self.etags[serial]
        status, answer, _ = self.send("pass", "GET", f"/v1/passes/{TYPE}/{serial}", headers)
        if status == 200 and "ETag" in answer:
            self.etags[serial] = answer["ETag"]

    def log(self):
        body = json.dumps({"logs": [f"soak client {self.number}: a message"]}).encode()
        self.send("log", "POST", "/v1/log", {"Content-Type": "application/json"}, body)

    def run(self):
        mix = [(self.register, 25), (self.unregister, 10), (self.serials_list, 25), (self.pass_get, 30), (self.log, 10)]
        operations, weights = zip(*mix)
        while time.monotonic() < self.deadline:
            self.random.choices(operations, weights)[0]()


def sample(process, database_url, database, started, latencies, builds):
    with open(f"/proc/{process.pid}/status") as f:
        rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    descriptors = len(os.listdir(f"/proc/{process.pid}/fd"))
    connections = subprocess.run(["psql", database_url, "-X", "-q", "-t", "-A", "-c",
                                  f"SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{database}'"],
                                 capture_output=True, text=True).stdout.strip()
    ordered = sorted(latencies)
    percentile = lambda p: ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0
    return {"minute": round((time.monotonic() - started) / 60, 2), "rss_mib": round(rss_kib / 1024, 1),
            "descriptors": descriptors, "postgres_connections": int(connections or 0),
            "requests": len(ordered), "p50_ms": round(percentile(0.5), 2), "p99_ms": round(percentile(0.99), 2),
            "builds": builds}


def plot(samples, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    minutes = [s["minute"] for s in samples]
    figure, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    series = [("rss_mib", "RSS (MiB)"), ("descriptors", "open descriptors"),
              ("postgres_connections", "PostgreSQL connections"), (("p50_ms", "p99_ms"), "latency (ms)")]
    for axis, (key, label) in zip(axes, series):
        for name in (key if isinstance(key, tuple) else (key,)):
            axis.plot(minutes, [s[name] for s in samples], marker=".", label=name)
        axis.set_ylabel(label)
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        if isinstance(key, tuple):
            axis.legend()
    axes[-1].set_xlabel("minute")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def growth(values):
    """The median of the second half less that of the first."""
    half = len(values) // 2
    return statistics.median(values[half:]) - statistics.median(values[:half])


def verdict(samples, warmup, ledger, stored):
    after = [s for s in samples if s["minute"] >= warmup] or samples[-1:]
    rss = [s["rss_mib"] for s in after]
    rss_spread = (max(rss) - min(rss)) / min(rss) if rss else 0
    fds = [s["descriptors"] for s in after]
    p99 = [s["p99_ms"] for s in after]
    expected = {(d, s) for d, serials in ledger.registered.items() for s in serials}
    lost = expected - stored
    extra = stored - expected
    errors = sum(count for (operation, status), count in ledger.statuses.items()
                 if isinstance(status, str) or status >= 500 or (status >= 400 and status not in (404, 429)))
    return {
        "rss_spread_after_warmup": round(rss_spread, 3), "rss_ok": rss_spread <= 0.10,
        # Flat: no growth from the first half after warm-up to the second (a sample taken while serve
        # rewrites index files after a build sees a moment's peak of open files, not a leak).
        "descriptors_after_warmup": [min(fds), max(fds)] if fds else [],
        "descriptors_ok": len(fds) < 2 or growth(fds) <= 4,
        "p99_ms_after_warmup": [min(p99), max(p99)] if p99 else [],
        "p99_ok": not p99 or max(p99) <= 3 * max(statistics.median(p99), 1.0),
        "errors": errors, "errors_ok": errors == 0,
        "lost": len(lost), "unexpected": len(extra), "lost_ok": not lost and not extra,
    }


def stored_registrations(database_url):
    rows = subprocess.run(["psql", database_url, "-X", "-q", "-t", "-A", "-F", " ", "-c",
                           "SELECT d.library_identifier, r.serial_number FROM registrations r "
                           "JOIN devices d ON d.id = r.device_id WHERE d.library_identifier LIKE 'soak%'"],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    return {tuple(row.split(" ", 1)) for row in rows if row}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "passforge"))
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--sample", type=float, default=60, help="seconds between samples")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--build-interval", type=float, default=120)
    parser.add_argument("--postgres", default=os.environ.get("PASSFORGE_TEST_POSTGRES_URL"))
    parser.add_argument("--out", default=os.path.join(REPO, "Benchmarks", "soak"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build -c release --product passforge` first")
    if not args.postgres:
        sys.exit("no PostgreSQL: pass --postgres URL, or run under scripts/with-postgres.sh")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit('matplotlib is missing: run this script with "$(scripts/test-venv.sh)" scripts/soak.py …')

    database = f"soak_{os.getpid()}"
    subprocess.run(["psql", args.postgres, "-X", "-q", "-c", f"CREATE DATABASE {database}"], check=True)
    database_url = os.path.join(args.postgres.split("?")[0].rsplit("/", 1)[0], database) + \
        ("?" + args.postgres.split("?", 1)[1] if "?" in args.postgres else "")
    scratch = tempfile.mkdtemp(prefix="passforge-soak-")
    root = os.path.join(scratch, "project")
    build_bench.write_project(root, args.passes, "list")
    build = lambda: subprocess.run([binary, "build", "--quiet", "--development-signing"], cwd=root, check=True,
                                   env=dict(os.environ, PASSFORGE_DATABASE_URL=database_url))
    build()
    serials = [f"M-{i:06d}" for i in range(args.passes)]
    tokens = {}
    for serial in serials:
        with zipfile.ZipFile(f"{root}/output/v1/passes/{TYPE}/{serial}") as archive:
            tokens[serial] = json.loads(archive.read("pass.json"))["authenticationToken"]
    process, port = bench.start_passforge(binary, root, database_url)
    ledger = Ledger()
    started = time.monotonic()
    deadline = started + args.minutes * 60
    clients = [Client(n, port, serials, tokens, ledger, deadline) for n in range(args.clients)]
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    samples, builds = [], 0
    try:
        for thread in threads:
            thread.start()
        next_sample, next_build = started + args.sample, started + args.build_interval
        while time.monotonic() < deadline:
            time.sleep(max(0.0, min(next_sample, next_build, deadline) - time.monotonic()))
            now = time.monotonic()
            if now >= next_build and now < deadline:
                # One pass changes: a new build, which serve notices and indexes.
                build_bench.write_content(root, args.passes, "list", changed=builds % args.passes)
                build()
                builds += 1
                next_build += args.build_interval
            if now >= next_sample:
                samples.append(sample(process, database_url, database, started, ledger.take_latencies(), builds))
                print(json.dumps(samples[-1]), flush=True)
                next_sample += args.sample
        for thread in threads:
            thread.join(timeout=90)
        if process.poll() is not None:
            sys.exit(f"passforge serve exited with status {process.returncode}")
        stored = stored_registrations(database_url)
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(["psql", args.postgres, "-X", "-q", "-c", f"DROP DATABASE IF EXISTS {database}"])

    warmup = 10 if args.minutes >= 60 else args.minutes / 6
    result = {"minutes": args.minutes, "clients": args.clients, "warmup_minutes": warmup, "builds": builds,
              "statuses": {f"{op} {status}": count for (op, status), count in sorted(ledger.statuses.items(), key=str)},
              "samples": samples, "verdict": verdict(samples, warmup, ledger, stored)}
    os.makedirs(args.out, exist_ok=True)
    name = f"soak-{int(args.minutes)}min"
    with open(os.path.join(args.out, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    plot(samples, os.path.join(args.out, name + ".png"),
         f"passforge serve on PostgreSQL, {args.clients} clients, {args.minutes:g} min")
    print(json.dumps(result["verdict"], indent=1))
    print(f"wrote {args.out}/{name}.json and {name}.png")
    if ledger.errors:
        print("first errors:", ledger.errors[:10])
    return 0 if all(v for k, v in result["verdict"].items() if k.endswith("_ok")) else 1


if __name__ == "__main__":
    sys.exit(main())
