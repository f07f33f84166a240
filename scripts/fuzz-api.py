#!/usr/bin/env python3
"""Property-based fuzzing of a running `passforge serve` with Schemathesis,
driven by openapi.yaml (every check Schemathesis has, stateful sequences
register -> serials -> unregister through the spec's links), plus passforge's
own checks:

  - every response that rejects a request (4xx) left the registration store
    and the output tree's device indices exactly as they were;
  - the server is still healthy afterwards (GET /health is 200).

The server must run with `--registration-limit 0` (Schemathesis is one client
registering many devices). Path parameters passTypeIdentifier and
serialNumber are pinned to one real pass, whose token is sent with every
request, so that the authenticated operations get past 401; with --order-type,
--order and --order-token, orderTypeIdentifier and orderIdentifier are pinned
to one real order, whose `AppleOrder` token goes with the order GET.

Usage:
  scripts/fuzz-api.py [--postgres URL] [--examples 500] [--max-time 900]   (`make fuzz`: builds and serves
                      the example project itself, SQLite and, with --postgres, PostgreSQL)
  scripts/fuzz-api.py --url http://127.0.0.1:8080 --token TOKEN --type pass.com.example --serial S-1 \\
                      --output output --database state/registrations.sqlite [--examples 20] [--seed 1] [--max-time S]
  --database: the SQLite file, or the postgres:// URL (read with psql).

`make test` runs a bounded, seeded run from a Swift test (FuzzAPITests);
`make fuzz` runs a long one. Prints one line of figures at the end:
  fuzz-api: cases N, failures F, seed S
"""
import argparse, json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request, zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOKS = r'''
import base64, hashlib, os, re, secrets, sqlite3, subprocess
import schemathesis

OUTPUT = os.environ["PASSFORGE_FUZZ_OUTPUT"]
DATABASE = os.environ["PASSFORGE_FUZZ_DATABASE"]
_before = {}

def _store_rows():
    queries = ["SELECT d.library_identifier, d.push_token, r.pass_type_identifier, r.serial_number "
               "FROM devices d JOIN registrations r ON r.device_id = d.id ORDER BY 1, 3, 4",
               "SELECT library_identifier, push_token FROM devices ORDER BY 1",
               "SELECT COUNT(*) FROM device_logs"]
    if DATABASE.startswith("postgres"):
        # One psql per snapshot: the three answers in one statement.
        query = ("SELECT (SELECT md5(coalesce(string_agg(d.library_identifier || ' ' || d.push_token || ' ' || "
                 "r.pass_type_identifier || ' ' || r.serial_number, ',' ORDER BY d.library_identifier, "
                 "r.pass_type_identifier, r.serial_number), '')) FROM devices d JOIN registrations r ON r.device_id = d.id), "
                 "(SELECT md5(coalesce(string_agg(library_identifier || ' ' || push_token, ',' ORDER BY library_identifier), '')) "
                 "FROM devices), (SELECT COUNT(*) FROM device_logs)")
        return [subprocess.run(["psql", "-X", "-A", "-t", "-q", DATABASE, "-c", query], check=True,
                               capture_output=True, text=True).stdout]
    path = DATABASE[len("sqlite:"):] if DATABASE.startswith("sqlite:") else DATABASE
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [repr(connection.execute(q).fetchall()) for q in queries]
    finally:
        connection.close()

def _tree():
    digest = hashlib.sha256()
    base = os.path.join(OUTPUT, "v1", "devices")
    for folder, folders, files in sorted(os.walk(base)):
        folders.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(path.encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()

def _snapshot():
    return (_store_rows(), _tree())

_TOKEN = re.compile(r"(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")

def _fresh_tokens(case):
    """A claim's schema-valid tokens made fresh: passforge refuses a DeviceCheck token it sent to Apple
    before (Apple calls tokens single-use), and Schemathesis repeats its examples."""
    if not case.operation.path.endswith("/claims") or not isinstance(case.body, dict):
        return
    for key in ("queryToken", "updateToken"):
        if isinstance(case.body.get(key), str) and _TOKEN.fullmatch(case.body[key]):
            case.body[key] = base64.b64encode(("fuzz-" + secrets.token_hex(12)).encode()).decode()

@schemathesis.hook
def before_call(ctx, case, **kwargs):
    _fresh_tokens(case)
    _before["snapshot"] = _snapshot()

@schemathesis.check
def rejected_requests_change_nothing(ctx, response, case):
    if 400 <= response.status_code < 500 and "snapshot" in _before:
        after = _snapshot()
        if after != _before["snapshot"]:
            raise AssertionError(f"a rejected request ({response.status_code}) changed the store or the device indices")
'''


def run_schemathesis(args, url, token, type_, serial, download, output, database):
    """One Schemathesis run against a running server; returns (cases, failures, healthy, exit code)."""
    executable = args.schemathesis or os.path.join(os.path.dirname(sys.executable), "schemathesis")
    scratch = tempfile.mkdtemp(prefix="passforge-fuzz-")
    with open(os.path.join(scratch, "passforge_fuzz_hooks.py"), "w") as f:
        f.write(HOOKS)
    config = os.path.join(scratch, "schemathesis.toml")
    with open(config, "w") as f:
        f.write("[parameters]\n")
        f.write(f'"path.passTypeIdentifier" = {json.dumps(type_)}\n"path.serialNumber" = {json.dumps(serial)}\n')
        if download:
            f.write(f'"path.capability" = {json.dumps(download.split("/")[-1])}\n')
        if args.offer:
            f.write(f'"path.offer" = {json.dumps(args.offer)}\n')
        if args.order_token:
            f.write(f'"path.orderTypeIdentifier" = {json.dumps(args.order_type)}\n"path.orderIdentifier" = {json.dumps(args.order)}\n')
        # A claim of schema-valid data may find the pool exhausted: 410 is a right answer then.
        f.write('[checks.positive_data_acceptance]\nexpected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "410", "429", "5xx"]\n')
        # A body beyond its route's bound is refused before it is read (413), whatever it holds.
        f.write('[checks.negative_data_rejection]\n'
                'expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]\n')
        if args.order_token:
            # Each item's own scheme and token: the order GET takes `AppleOrder`, every other call `ApplePass`
            # (a header given on the command line would win over these, so there is none then).
            for regex, authorization in [("^/v1/orders/", f"AppleOrder {args.order_token}"), ("^/(?!v1/orders/)", f"ApplePass {token}")]:
                f.write(f'[[operations]]\ninclude-path-regex = {json.dumps(regex)}\nheaders = {{ Authorization = {json.dumps(authorization)} }}\n')
    environment = dict(os.environ, PYTHONPATH=scratch, SCHEMATHESIS_HOOKS="passforge_fuzz_hooks",
                       PASSFORGE_FUZZ_OUTPUT=os.path.abspath(output), PASSFORGE_FUZZ_DATABASE=database, NO_COLOR="1")
    command = [executable, "--config-file", config, "run", os.path.join(REPO, "openapi.yaml"), "--url", url,
               "--checks", "all", "--workers", "1", "--seed", str(args.seed), "--max-examples", str(args.examples),
               "--phases", "examples,coverage,fuzzing,stateful",
               "--request-timeout", "10", "--suppress-health-check", "all", "--no-color", "--continue-on-failure"]
    if not args.order_token:
        command += ["--header", f"Authorization: ApplePass {token}"]
    if args.max_time:
        command += ["--max-time", str(args.max_time)]
    result = subprocess.run(command, env=environment, capture_output=True, text=True)
    output_text = result.stdout + result.stderr
    print(output_text)
    healthy = False
    try:
        with urllib.request.urlopen(url + "/health", timeout=10) as answer:
            healthy = answer.status == 200
    except Exception as error:  # noqa: BLE001 - any failure means unhealthy
        print(f"fuzz-api: /health failed after the run: {error}")
    cases = sum(int(n) for n in re.findall(r"(\d+) generated", output_text))
    failures = re.search(r"(\d+) (?:unique )?failures?", output_text)
    failure_count = int(failures.group(1)) if failures else (0 if result.returncode == 0 else -1)
    return cases, failure_count, healthy, result.returncode


def token_of(pass_file, root_file="pass.json"):
    with zipfile.ZipFile(pass_file) as archive:
        return json.load(archive.open(root_file))["authenticationToken"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_contained(args):
    """`make fuzz`: the example project built in a scratch folder, a server per store."""
    root = tempfile.mkdtemp(prefix="passforge-fuzz-project-")
    for item in ("content", "templates", "passforge.yml"):
        source = os.path.join(REPO, item)
        (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, os.path.join(root, item))
    environment = dict(os.environ, CI="")
    environment.pop("CI")
    subprocess.run([args.binary, "build", "--development-signing", "--quiet"], cwd=root, env=environment, check=True)
    with open(os.path.join(root, "output", ".passforge", "downloads.csv")) as f:
        rows = [line.split(",")[:3] for line in f.read().splitlines()[1:]]
    # The first pass, and the first order when the examples have one (its own token, `AppleOrder`).
    type_, serial, download = next(row for row in rows if row[2].endswith(".pkpass"))
    token = token_of(os.path.join(root, "output", "v1", "passes", type_, serial))
    order = next((row for row in rows if row[2].endswith(".order")), None)
    if order and not args.order_token:
        args.order_type, args.order = order[0], order[1]
        args.order_token = token_of(os.path.join(root, "output", "v1", "orders", order[0], order[1]), "order.json")
    stores = [("SQLite", os.path.join(root, "registrations.sqlite"))] + ([("PostgreSQL", args.postgres)] if args.postgres else [])
    total_cases, total_failures, ok = 0, 0, True
    for name, database in stores:
        port = free_port()
        server = subprocess.Popen([args.binary, "serve", "--port", str(port), "--registration-limit", "0"], cwd=root,
                                  env=dict(environment, PASSFORGE_DATABASE_URL=database, LOG_LEVEL="warning"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            cases, failures, healthy, code = run_schemathesis(args, f"http://127.0.0.1:{port}", token, type_, serial, download,
                                                              os.path.join(root, "output"), database)
        finally:
            server.terminate()
            log = server.communicate(timeout=30)[1]
        errors = [line for line in log.splitlines() if " error " in line]
        print(f"fuzz-api: {name}: cases {cases}, failures {failures}, seed {args.seed}, "
              f"healthy afterwards {'yes' if healthy else 'NO'}, server errors logged {len(errors)}")
        for line in errors[:20]:
            print("  " + line)
        total_cases += cases
        total_failures += max(failures, 0)
        ok = ok and code == 0 and healthy and not errors
    print(f"fuzz-api: all stores: cases {total_cases}, failures {total_failures}")
    sys.exit(0 if ok else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server; without it, the example project is built and served here")
    parser.add_argument("--token")
    parser.add_argument("--type")
    parser.add_argument("--serial")
    parser.add_argument("--download", help="a download path of the build (download/<capability>.pkpass)")
    parser.add_argument("--output", help="the output tree the server serves")
    parser.add_argument("--database", help="SQLite file or postgres:// URL of the server at --url")
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "debug", "passforge"))
    parser.add_argument("--postgres", help="self-contained runs: also fuzz a server on this PostgreSQL database")
    parser.add_argument("--offer", help="an offer the server at --url serves (with a DeviceCheck mock behind it)")
    parser.add_argument("--order-type", help="the order type identifier of an order the server at --url serves")
    parser.add_argument("--order", help="that order's orderIdentifier")
    parser.add_argument("--order-token", help="that order's authenticationToken")
    parser.add_argument("--examples", type=int, default=20, help="examples per operation and phase")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-time", type=int, help="time budget; fuzzing and stateful phases repeat until it is spent")
    parser.add_argument("--schemathesis", default=None, help="the schemathesis executable (default: beside this python)")
    args = parser.parse_args()
    if not args.url:
        self_contained(args)
    for required in ("token", "type", "serial", "output", "database"):
        if getattr(args, required) is None:
            parser.error(f"--{required} is required with --url")
    cases, failures, healthy, code = run_schemathesis(args, args.url, args.token, args.type, args.serial, args.download,
                                                      args.output, args.database)
    print(f"fuzz-api: cases {cases}, failures {failures}, seed {args.seed}, healthy afterwards {'yes' if healthy else 'NO'}")
    sys.exit(0 if code == 0 and healthy else 1)


if __name__ == "__main__":
    main()
