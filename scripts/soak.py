#!/usr/bin/env python3
"""passforge soak test: mixed load against `passforge serve` on PostgreSQL for
--minutes N, sampling the server every --sample seconds (default 60):
resident memory (RSS), open file descriptors, PostgreSQL connections of its
database, and the count and p50/p99 latency of the requests of that interval.
Draws them as a PNG (matplotlib) and writes them as JSON.

The load, from --clients threads (default 8), one keep-alive connection each:
registrations (new devices, and existing ones adding a pass; each device its own
push token; --devices-per-client N stops making new devices at N, so that growth
with the number of devices shows apart from growth with time), unregistrations, GET serials, pass GETs (conditional: 304 when the
device has the pass, else 200), device logs. Beside them one claimant makes
--claims-per-minute DeviceCheck offer claims (default 60): new devices (201, a
pass of the offer's pool), retries of an answered claim with fresh tokens (200,
the same pass) and a claimed device claiming again (409). A stand-in for
Apple's DeviceCheck service runs in this script (HTTP on loopback, which
`deviceCheck.baseURL` accepts there): it keeps two bits per device, as Apple
does. Every --build-interval seconds (default 120) one pass's content changes
and `passforge build --push` runs: `serve` notices the build (it rewrites the
index files of the devices holding the pass) and the devices holding the pass
are pushed through `mock-apns` (Benchmarks/MockAPNsProcess: HTTP/2, mutual TLS,
every push answered 200; the project is signed with its test PKI's Pass Type
ID certificate). Without mock-apns next to --binary (or at --mock-apns) the
project is signed with the development chain and the build runs without --push.

Goals (issue 35): RSS within 10 % and descriptors flat from the end of the
warm-up (minute 10 of 60, a sixth of shorter runs) to the end, p99 flat,
0 errors other than the limits' 4xx, 0 lost: every acknowledged registration
and unregistration is what the database holds at the end; every claim answered
201 holds its own pass (none handed out twice), a retry gets the same pass, and
the database holds exactly the answered claims, each with its bit set; every
push `build --push` reports as sent reached the mock.

Usage: scripts/with-postgres.sh sh -c '"$(scripts/test-venv.sh)" scripts/soak.py --minutes 60 \\
           --postgres "$PASSFORGE_TEST_POSTGRES_URL" [--binary PATH] [--mock-apns PATH] --out Benchmarks/soak'
(swift build -c release --product passforge && swift build -c release --product mock-apns first:
SwiftPM builds only the last of several --product options.)
"""
import argparse, base64, hashlib, http.client, http.server, json, os, random, re, shutil, statistics, subprocess, sys
import tempfile, threading, time, uuid, zipfile

sys.dont_write_bytecode = True
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
bench = load_script("bench-serve")
build_bench = load_script("bench-build")
scale = load_script("bench-scale")
TYPE = bench.TYPE
OFFER = "soak-coupon"
# Answers that are no error in any operation: 404 (a device's serials before it registers) and the limits' 429.
NOT_ERRORS = (404, 429)


def push_token(device):
    """Each device its own push token, as phones have: a build's push reaches every device holding the pass."""
    return hashlib.sha256(device.encode()).hexdigest()


class Ledger:
    """What the server acknowledged, and every answer's status and latency."""

    def __init__(self):
        self.lock = threading.Lock()
        self.registered = {}          # device -> set of serials acknowledged as registered
        self.latencies = []           # seconds, since the last sample
        self.statuses = {}
        self.errors = []              # (operation, status or exception), capped
        self.error_count = 0
        self.claims = {}              # claim identifier -> (device, serial), each answered 201
        self.handed_out = set()       # the serials of those claims
        self.claim_problems = []      # a pass handed out twice, a retry answered with another pass
        self.pushes = {"builds": 0, "sent": 0, "succeeded": 0, "failed": 0, "reached_mock": 0, "build_failures": []}

    def record(self, operation, status, seconds, expected=()):
        with self.lock:
            self.latencies.append(seconds)
            self.statuses[(operation, status)] = self.statuses.get((operation, status), 0) + 1
            if status in expected:
                return
            if isinstance(status, str) or status >= 500 or (status >= 400 and status not in NOT_ERRORS):
                self.error_count += 1
                if len(self.errors) < 50:
                    self.errors.append((operation, status))

    def take_latencies(self):
        with self.lock:
            taken, self.latencies = self.latencies, []
        return taken


class Client:
    """One device-like client on a keep-alive connection; the operations of the mix."""

    def __init__(self, number, port, serials, tokens, ledger, deadline, device_cap=0):
        self.number, self.port, self.serials, self.tokens = number, port, serials, tokens
        self.ledger, self.deadline, self.device_cap = ledger, deadline, device_cap
        self.connection = None
        self.devices = []
        self.etags = {}
        self.random = random.Random(number)

    def send(self, operation, method, path, headers=None, body=None, expected=()):
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
        self.ledger.record(operation, status, time.monotonic() - started, expected)
        return status, answer_headers, data

    def auth(self, serial):
        return {"Authorization": f"ApplePass {self.tokens[serial]}", "Content-Type": "application/json"}

    def register(self):
        if self.devices and (self.random.random() < 0.3 or 0 < self.device_cap <= len(self.devices)):
            device = self.random.choice(self.devices)
        else:
            device = f"soak{self.number}d{len(self.devices):07d}"
            self.devices.append(device)
        serial = self.random.choice(self.serials)
        path = f"/v1/devices/{device}/registrations/{TYPE}/{serial}"
        body = json.dumps({"pushToken": push_token(device)}).encode()
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


class Claimant(Client):
    """An app claiming the offer at a steady rate: new devices (201), retries of an answered claim with
    fresh tokens (200, the same pass), and a claimed device with a new claim (409 alreadyClaimed)."""

    def __init__(self, port, ledger, deadline, per_minute):
        super().__init__(1000, port, [], {}, ledger, deadline)
        self.interval = 60 / per_minute
        self.answered = []            # (claim identifier, device, serial)
        self.made = 0

    def claim(self, operation, identifier, device, expected):
        """One claim with two fresh tokens of the device; its status and the serial its answer names."""
        # Tokens as Tests/MockDeviceCheck makes them: base64 of "<device>:<anything>", each one new
        # (passforge refuses a token it sent to Apple before).
        tokens = [base64.b64encode(f"{device}:{uuid.uuid4()}".encode()).decode() for _ in range(2)]
        body = json.dumps({"claimIdentifier": identifier, "queryToken": tokens[0], "updateToken": tokens[1]})
        status, _, data = self.send(operation, "POST", f"/v1/offers/{OFFER}/claims",
                                    {"Content-Type": "application/json"}, body.encode(), expected=(expected,))
        try:
            return status, json.loads(data).get("serialNumber") if status in (200, 201) else None
        except ValueError:
            return status, None

    def new_device(self):
        device, identifier = f"claim{self.made:07d}", str(uuid.uuid4()).upper()
        self.made += 1
        status, serial = self.claim("claim", identifier, device, 201)
        if status != 201 or serial is None:
            return
        with self.ledger.lock:
            if serial in self.ledger.handed_out:
                self.ledger.claim_problems.append(f"{serial} handed out twice (again to {device})")
            self.ledger.handed_out.add(serial)
            self.ledger.claims[identifier] = (device, serial)
        self.answered.append((identifier, device, serial))

    def retry(self):
        identifier, device, serial = self.random.choice(self.answered)
        status, again = self.claim("claim retry", identifier, device, 200)
        if status == 200 and again != serial:
            with self.ledger.lock:
                self.ledger.claim_problems.append(f"retry of {identifier} answered {again}, not {serial}")

    def claimed_again(self):
        _, device, _ = self.random.choice(self.answered)
        self.claim("claim again", str(uuid.uuid4()).upper(), device, 409)

    def run(self):
        next_claim = time.monotonic()
        while next_claim < self.deadline:
            kind = self.random.random()
            if not self.answered or kind < 0.8:
                self.new_device()
            elif kind < 0.92:
                self.retry()
            else:
                self.claimed_again()
            next_claim += self.interval
            time.sleep(max(0.0, min(next_claim, self.deadline) - time.monotonic()))


class DeviceCheckStandIn:
    """Apple's DeviceCheck service as far as a claim uses it, over HTTP on loopback (which
    `deviceCheck.baseURL` accepts there): two bits per device, Apple's documented answers (a query:
    JSON `bit0`, `bit1`, `last_update_time`, or the text "Bit State Not Found" for a device never
    updated; an update: an empty 200). A token is base64 of `<device>:<anything>`, as in
    Tests/MockDeviceCheck. The JWT is not verified here (the claim benchmark's mock does that)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.bits = {}
        self.calls = {}
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *arguments):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, text = stand_in.answer(self.path, self.headers.get("Authorization", ""), body)
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if text.startswith("{") else "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path, authorization, body):
        with self.lock:
            self.calls[path] = self.calls.get(path, 0) + 1
        if not authorization.startswith("Bearer "):
            return 401, "Missing or badly formatted authorization token"
        try:
            request = json.loads(body)
            device = base64.b64decode(request["device_token"], validate=True).decode().split(":", 1)[0]
        except (ValueError, KeyError, TypeError):
            return 400, "Missing or incorrectly formatted device token payload"
        with self.lock:
            if path == "/v1/query_two_bits":
                bits = self.bits.get(device)
                if bits is None:
                    return 200, "Bit State Not Found"
                return 200, json.dumps({"bit0": bits[0], "bit1": bits[1], "last_update_time": "2026-11"})
            if path == "/v1/update_two_bits":
                self.bits[device] = (request.get("bit0") is True, request.get("bit1") is True)
                return 200, ""
            if path == "/v1/validate_device_token":
                return 200, ""
        return 404, "Not Found"

    def stop(self):
        self.server.shutdown()


def write_offer(root, pool, port):
    """passforge.yml's deviceCheck: (a throwaway P-256 key, the stand-in's URL) and offers:, and a pool of
    `pool` coupons."""
    os.makedirs(f"{root}/keys", exist_ok=True)
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", f"{root}/keys/AuthKey_KEY1234567.p8"], check=True, capture_output=True)
    with open(f"{root}/passforge.yml", "a") as f:
        f.write("deviceCheck:\n  teamIdentifier: ABCDE12345\n  keyIdentifier: KEY1234567\n"
                f"  privateKey: keys/AuthKey_KEY1234567.p8\n  baseURL: http://127.0.0.1:{port}\n"
                f"offers:\n  {OFFER}:\n    bit: 0\n")
    with open(f"{root}/content/coupons.yml", "w") as f:
        f.write(f"template: card\noffer: {OFFER}\ndefaults: {{ data: {{ tier: Coupon, balance: 0 }} }}\npasses:\n")
        f.writelines(f'  - serialNumber: C-{i:06d}\n    data: {{ name: "Coupon {i}" }}\n' for i in range(pool))


class Builder:
    """`passforge build`, and after the first `build --push` when mock-apns is there; the push figures in
    the ledger, with what reached the mock."""

    PUSHED = re.compile(r"pushed: sent (\d+), succeeded (\d+), .*failed (\d+)")

    def __init__(self, binary, root, database_url, mock, ledger):
        self.binary, self.root, self.database_url, self.mock, self.ledger = binary, root, database_url, mock, ledger

    def build(self, push=True):
        push = push and self.mock is not None
        arguments = [self.binary, "build", "--quiet"] + (["--push"] if push else []) + \
            ([] if self.mock else ["--development-signing"])
        before = scale.mock_counts(self.mock)["pushes"] if push else 0
        done = subprocess.run(arguments, cwd=self.root, capture_output=True, text=True,
                              env=dict(os.environ, PASSFORGE_DATABASE_URL=self.database_url))
        if done.returncode != 0:
            with self.ledger.lock:
                self.ledger.error_count += 1
                self.ledger.pushes["build_failures"].append((done.stdout + done.stderr).strip()[-500:])
        if not push:
            return
        pushed = self.PUSHED.search(done.stdout)
        with self.ledger.lock:
            figures = self.ledger.pushes
            figures["builds"] += 1
            figures["reached_mock"] += scale.mock_counts(self.mock)["pushes"] - before
            if pushed:
                figures["sent"] += int(pushed.group(1))
                figures["succeeded"] += int(pushed.group(2))
                figures["failed"] += int(pushed.group(3))


def start_serve(binary, root, database_url, claim_limit, log):
    """`passforge serve` on the project; its log (warnings and errors) to `log`."""
    port = bench.free_port()
    env = dict(os.environ, PASSFORGE_DATABASE_URL=database_url, LOG_LEVEL="warning")
    # One client address for every client: the per-client registration limit is off, and the claim
    # limit is --claim-limit (default off) so that the claims reach the store and the stand-in.
    process = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--registration-limit", "0",
                                "--claim-limit", str(claim_limit)], cwd=root, env=env,
                               stdout=subprocess.DEVNULL, stderr=log)
    bench.wait_for(port, process, "passforge serve")
    return process, port


def sample(process, database_url, database, started, latencies, ledger):
    with open(f"/proc/{process.pid}/status") as f:
        rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    descriptors = len(os.listdir(f"/proc/{process.pid}/fd"))
    connections = subprocess.run(["psql", database_url, "-X", "-q", "-t", "-A", "-c",
                                  f"SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{database}'"],
                                 capture_output=True, text=True).stdout.strip()
    ordered = sorted(latencies)
    percentile = lambda p: ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0
    with ledger.lock:
        claims, builds, pushes = len(ledger.claims), ledger.pushes["builds"], ledger.pushes["reached_mock"]
    return {"minute": round((time.monotonic() - started) / 60, 2), "rss_mib": round(rss_kib / 1024, 1),
            "descriptors": descriptors, "postgres_connections": int(connections or 0),
            "requests": len(ordered), "p50_ms": round(percentile(0.5), 2), "p99_ms": round(percentile(0.99), 2),
            "builds": builds, "claims": claims, "pushes": pushes,
            # The machine's load: the load generator and anything else on it share the cores with serve.
            "load_average": round(os.getloadavg()[0], 1)}


def plot(samples, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    minutes = [s["minute"] for s in samples]
    figure, axes = plt.subplots(5, 1, figsize=(9, 13), sharex=True)
    series = [("rss_mib", "RSS (MiB)"), ("descriptors", "open descriptors"),
              ("postgres_connections", "PostgreSQL connections"), (("p50_ms", "p99_ms"), "latency (ms)"),
              ("requests", "requests per sample")]
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


def claims_verdict(ledger, stored_claims, stand_in):
    """Every claim answered 201 in the database with its own pass and its bit set (there and at the
    stand-in), and nothing else there."""
    expected = {(identifier, serial) for identifier, (_, serial) in ledger.claims.items()}
    stored = {(identifier, serial) for identifier, serial, _ in stored_claims}
    bit_not_set = sum(1 for _, _, bit_set in stored_claims if bit_set != "t")
    stand_in_unset = sum(1 for device, _ in ledger.claims.values() if not stand_in.bits.get(device, (False,))[0])
    problems = ledger.claim_problems
    return {
        "claims_handed_out": len(ledger.claims), "claims_twice_or_mismatched": len(problems),
        "claims_lost": len(expected - stored), "claims_unexpected": len(stored - expected),
        "claims_bit_not_set": bit_not_set + stand_in_unset,
        "claims_ok": bool(ledger.claims) and not problems and expected == stored and not bit_not_set
        and not stand_in_unset,
    }


def pushes_verdict(ledger, mock):
    figures = dict(ledger.pushes, build_failures=len(ledger.pushes["build_failures"]))
    if mock is None:
        return {"pushes": "not measured (no mock-apns)"}
    return {"pushes": figures, "pushes_ok": figures["builds"] > 0 and figures["sent"] == figures["reached_mock"]
            and figures["failed"] == 0 and not figures["build_failures"]}


def verdict(samples, warmup, ledger, stored, stored_claims, stand_in, mock):
    after = [s for s in samples if s["minute"] >= warmup] or samples[-1:]
    rss = [s["rss_mib"] for s in after]
    rss_spread = (max(rss) - min(rss)) / min(rss) if rss else 0
    fds = [s["descriptors"] for s in after]
    p99 = [s["p99_ms"] for s in after]
    expected = {(d, s) for d, serials in ledger.registered.items() for s in serials}
    lost = expected - stored
    extra = stored - expected
    return {
        "rss_spread_after_warmup": round(rss_spread, 3), "rss_ok": rss_spread <= 0.10,
        # Flat: no growth from the first half after warm-up to the second (a sample taken while serve
        # rewrites index files after a build sees a moment's peak of open files, not a leak).
        "descriptors_after_warmup": [min(fds), max(fds)] if fds else [],
        "descriptors_ok": len(fds) < 2 or growth(fds) <= 4,
        "p99_ms_after_warmup": [min(p99), max(p99)] if p99 else [],
        "p99_ok": not p99 or max(p99) <= 3 * max(statistics.median(p99), 1.0),
        "errors": ledger.error_count, "errors_ok": ledger.error_count == 0,
        "lost": len(lost), "unexpected": len(extra), "lost_ok": not lost and not extra,
        **claims_verdict(ledger, stored_claims, stand_in), **pushes_verdict(ledger, mock),
    }


def psql_rows(database_url, query):
    rows = subprocess.run(["psql", database_url, "-X", "-q", "-t", "-A", "-F", " ", "-c", query],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    return [tuple(row.split(" ")) for row in rows if row]


def stored_registrations(database_url):
    return set(psql_rows(database_url, "SELECT d.library_identifier, r.serial_number FROM registrations r "
                                       "JOIN devices d ON d.id = r.device_id WHERE d.library_identifier LIKE 'soak%'"))


def stored_claims(database_url):
    return psql_rows(database_url, f"SELECT claim_identifier, serial_number, bit_set FROM offer_claims "
                                   f"WHERE offer = '{OFFER}'")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "passforge"))
    parser.add_argument("--mock-apns", help="the mock-apns executable (default: next to --binary)")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--sample", type=float, default=60, help="seconds between samples")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--devices-per-client", type=int, default=0,
                        help="new devices per client until N, then only existing ones (default 0: no cap)")
    parser.add_argument("--claims-per-minute", type=float, default=60)
    parser.add_argument("--claim-limit", type=int, default=0, help="serve --claim-limit (default 0: off)")
    parser.add_argument("--build-interval", type=float, default=120)
    parser.add_argument("--postgres", default=os.environ.get("PASSFORGE_TEST_POSTGRES_URL"))
    parser.add_argument("--out", default=os.path.join(REPO, "Benchmarks", "soak"))
    parser.add_argument("--name", help="the figures' file name without extension (default soak-<N>min)")
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    args.mock_apns = args.mock_apns or os.path.join(os.path.dirname(args.binary), "mock-apns")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"{args.binary} not found: run `swift build -c release --product passforge` first")
    if not args.postgres:
        sys.exit("no PostgreSQL: pass --postgres URL, or run under scripts/with-postgres.sh")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit('matplotlib is missing: run this script with "$(scripts/test-venv.sh)" scripts/soak.py …')
    return args


def run_load(args, process, port, builder, serials, tokens, ledger, database_url, database):
    """The clients, the claimant and the builds until the deadline; the samples."""
    started = time.monotonic()
    deadline = started + args.minutes * 60
    clients = [Client(n, port, serials, tokens, ledger, deadline, args.devices_per_client) for n in range(args.clients)]
    clients.append(Claimant(port, ledger, deadline, args.claims_per_minute))
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    samples, changes = [], 0
    for thread in threads:
        thread.start()
    next_sample, next_build = started + args.sample, started + args.build_interval
    while time.monotonic() < deadline:
        time.sleep(max(0.0, min(next_sample, next_build, deadline) - time.monotonic()))
        now = time.monotonic()
        if now >= next_build and now < deadline:
            # One pass changes: a new build, which serve notices and indexes, and its push.
            changes += 1
            build_bench.write_content(args.root, args.passes, "list", changed=changes % args.passes)
            builder.build()
            next_build += args.build_interval
        if now >= next_sample:
            samples.append(sample(process, database_url, database, started, ledger.take_latencies(), ledger))
            print(json.dumps(samples[-1]), flush=True)
            next_sample += args.sample
    for thread in threads:
        thread.join(timeout=90)
    return samples


def write_results(args, result, samples):
    os.makedirs(args.out, exist_ok=True)
    name = args.name or f"soak-{int(args.minutes)}min"
    with open(os.path.join(args.out, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    plot(samples, os.path.join(args.out, name + ".png"),
         f"passforge serve on PostgreSQL, {args.clients} clients and claims, build --push every "
         f"{round(args.build_interval / 60, 2):g} min, {args.minutes:g} min")
    print(json.dumps(result["verdict"], indent=1))
    print(f"wrote {args.out}/{name}.json and {name}.png")


def main():
    args = parse_arguments()
    database = f"soak_{os.getpid()}"
    subprocess.run(["psql", args.postgres, "-X", "-q", "-c", f"CREATE DATABASE {database}"], check=True)
    database_url = os.path.join(args.postgres.split("?")[0].rsplit("/", 1)[0], database) + \
        ("?" + args.postgres.split("?", 1)[1] if "?" in args.postgres else "")
    scratch = tempfile.mkdtemp(prefix="passforge-soak-")
    args.root = os.path.join(scratch, "project")
    stand_in, ledger, mock, process = DeviceCheckStandIn(), Ledger(), None, None
    if os.access(args.mock_apns, os.X_OK):
        mock, environment = scale.start_mock_apns(args.mock_apns, TYPE)
        os.environ.update(environment)
    else:
        print(f"no {args.mock_apns}: builds without --push, pushes not measured "
              "(swift build -c release --product mock-apns)", file=sys.stderr)
    serve_log = open(os.path.join(scratch, "serve.log"), "w+")
    try:
        build_bench.write_project(args.root, args.passes, "list")
        write_offer(args.root, int(args.claims_per_minute * args.minutes) + 50, stand_in.port)
        builder = Builder(args.binary, args.root, database_url, mock, ledger)
        builder.build(push=False)
        if ledger.pushes["build_failures"]:
            sys.exit("the first build failed:\n" + ledger.pushes["build_failures"][0])
        serials = [f"M-{i:06d}" for i in range(args.passes)]
        tokens = {}
        for serial in serials:
            with zipfile.ZipFile(f"{args.root}/output/v1/passes/{TYPE}/{serial}") as archive:
                tokens[serial] = json.loads(archive.read("pass.json"))["authenticationToken"]
        process, port = start_serve(args.binary, args.root, database_url, args.claim_limit, serve_log)
        samples = run_load(args, process, port, builder, serials, tokens, ledger, database_url, database)
        if process.poll() is not None:
            sys.exit(f"passforge serve exited with status {process.returncode}")
        stored, claims = stored_registrations(database_url), stored_claims(database_url)
    finally:
        if process is not None:
            process.terminate()
            process.wait()
        if mock is not None:
            mock.stdin.close()
            mock.wait()
        stand_in.stop()
        serve_log.seek(0)
        log_lines = serve_log.read().splitlines()
        serve_log.close()
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(["psql", args.postgres, "-X", "-q", "-c", f"DROP DATABASE IF EXISTS {database}"])

    warmup = 10 if args.minutes >= 60 else args.minutes / 6
    result = {"minutes": args.minutes, "clients": args.clients, "warmup_minutes": warmup,
              "devices_per_client": args.devices_per_client or None,
              "claims_per_minute": args.claims_per_minute, "binary": args.binary,
              "statuses": {f"{op} {status}": count for (op, status), count in sorted(ledger.statuses.items(), key=str)},
              "devicecheck_calls": stand_in.calls, "serve_log_lines": len(log_lines), "serve_log_first": log_lines[:10],
              "build_failures": ledger.pushes["build_failures"][:5],
              "samples": samples, "verdict": verdict(samples, warmup, ledger, stored, claims, stand_in, mock)}
    write_results(args, result, samples)
    if ledger.errors or ledger.claim_problems:
        print("first errors:", ledger.errors[:10], ledger.claim_problems[:10])
    return 0 if all(v for k, v in result["verdict"].items() if k.endswith("_ok")) else 1


if __name__ == "__main__":
    sys.exit(main())
