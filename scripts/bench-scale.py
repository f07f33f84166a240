#!/usr/bin/env python3
"""passforge at scale (issue 33, item 4): N devices on P passes, on PostgreSQL,
two `passforge serve` behind nginx (deploy/nginx-passforge.conf as shipped,
its upstream pointed at both servers).

Measures, in one run:
  - registrations per second across the two servers: wrk (2 threads, --lanes
    connections) registers a new device on one pass per request, through
    nginx; the CPU seconds of wrk, both servers and nginx, and how busy the
    machine was, are reported with it (the load generator shares the 2 cores),
  - the p99 of `GET /v1/devices/<device>/registrations/<type>` (the serials
    list) for devices drawn at random from the store, through nginx (the index
    file with --device-lists files; serve answering from PostgreSQL with store),
  - the device indices' footprint on disk (du of v1/devices/ per device with
    an index file; none with --device-lists store) and PostgreSQL's tables and
    indexes,
  - pushes, through the APNs mock as a process (`mock-apns`: HTTP/2, mutual
    TLS, every push answered 200; the project is signed with its test PKI's
    Pass Type ID certificate), for each count of --connections (HTTP/2
    connections per pass type, `push --connections N`): a `passforge push` to
    every device (each pass new since the last push; each device has its own
    push token) with the first count; for each count a `passforge push` after
    10% of the passes changed, and a `passforge build --push` after another 1%
    changed (devices pushed, seconds),
against the issue's goals (>= 2,500 registrations/s, serials p99 <= 20 ms,
<= 4 GB of index on disk at 1,000,000 devices, push of 1% in <= 60 s).

Without --seed, devices register through HTTP until the store holds --devices.
With --seed, the --devices devices are first written by SQL into the store's
own tables (the schema the servers migrated; about a minute for 1,000,000,
where HTTP takes 10 to 20 minutes), then HTTP registrations are measured for
--window seconds on top of them; the output says so ("seeded"). Seeded devices
have no index files: in files mode the footprint is then per device registered
through HTTP, and the serials GETs sample those devices only.

Usage: scripts/with-postgres.sh scripts/bench-scale.py [--devices N] [--passes N] [--lanes N]
           [--seed [--window S]] [--device-lists files|store] [--connections 1,4]
           [--binary PATH] [--mock-apns PATH] [--postgres URL]
(swift build -c release --product passforge && swift build -c release --product mock-apns first; without mock-apns the
project is signed with the development chain and the pushes are not measured.)
The million: scripts/with-postgres.sh scripts/bench-scale.py --devices 1000000 --passes 100000 --seed
"""
import argparse, http.client, json, os, re, resource, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LOAD_AT_START = os.getloadavg()
GOALS = {"registrations/s": 2_500.0, "serials p99 ms": 20.0, "index GB at 1M": 4.0, "push of 1% s": 60.0}


def start_mock_apns(path, pass_type):
    """The APNs mock as a process: (process, the environment that signs with its PKI and pushes into it)."""
    process = subprocess.Popen([path, pass_type], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = process.stdout.readline()
    if not first:
        sys.exit(f"{path} exited with status {process.wait()} before it printed its environment")
    return process, json.loads(first)["environment"]


def mock_counts(mock):
    """The mock's counts so far: pushes answered, connections accepted, the most streams at once."""
    mock.stdin.write("counts\n")
    mock.stdin.flush()
    return json.loads(mock.stdout.readline())


def change_passes(root, balances, offset, every):
    """Changes the balance of every EVERY-th pass from OFFSET in BALANCES (what the content holds, pass by pass) and
    rewrites the content with them; returns how many passes changed."""
    changed = range(offset % every, len(balances), every)
    for i in changed:
        balances[i] += 1000
    with open(f"{root}/content/members.yml", "w") as f:
        f.write("template: card\ndefaults: { data: { tier: Gold } }\npasses:\n")
        for i, balance in enumerate(balances):
            f.write(f'  - serialNumber: M-{i:06d}\n    data: {{ name: "Member {i}", balance: {balance} }}\n')
    return len(changed)


def timed(binary, root, arguments, database):
    """passforge ARGUMENTS in the project with the store; (seconds, its last line)."""
    os.environ["PASSFORGE_DATABASE_URL"] = database
    try:
        return load_script("bench-publish").run(binary, root, arguments, 3600)
    finally:
        del os.environ["PASSFORGE_DATABASE_URL"]


def push_phase(binary, root, database, mock, passes, connections):
    """A push to every device (the first count of CONNECTIONS); for each count, a push after 10% of the passes
    changed (the build before it not timed), then a build --push after another 1% changed: the figures, with the
    mock's counts. (No second push to every device: a build changing every pass rewrites every device's index.)"""
    balances = [i % 500 for i in range(passes)]  # as bench-build's project has them
    figures = {}

    def timed_push(name, arguments, changed=None):
        ahead = mock_counts(mock)
        try:
            seconds, line = timed(binary, root, arguments, database)
        except SystemExit as failure:  # bench-publish's run exits with the command's output: keep the figures so far
            figures[name] = {"passes_changed": changed, "failed": str(failure.code).strip()[-400:]}
            print(f"  {name}: failed", file=sys.stderr, flush=True)
            return
        after = mock_counts(mock)
        pushed = after["pushes"] - ahead["pushes"]
        figures[name] = {"passes_changed": changed, "pushes": pushed, "seconds": round(seconds, 1),
                         "per_s": round(pushed / seconds), "connections_opened": after["connections"]
                         - ahead["connections"], "line": line}
        print(f"  {name}: {pushed:,} pushes in {seconds:.1f} s", file=sys.stderr, flush=True)

    timed_push(f"push_all_devices_{connections[0]}", ["push", "--connections", str(connections[0])])
    for run, count in enumerate(connections, start=1):
        changed = change_passes(root, balances, run, 10)
        seconds, _ = timed(binary, root, ["build", "--quiet"], database)
        print(f"  built after 10% changed in {seconds:.1f} s", file=sys.stderr, flush=True)
        timed_push(f"push_after_10_percent_{count}", ["push", "--connections", str(count)], changed)
    for run, count in enumerate(connections, start=1):
        changed = change_passes(root, balances, run + 50, 100)
        timed_push(f"build_push_after_1_percent_{count}",
                   ["build", "--push", "--quiet", "--push-connections", str(count)], changed)
    figures["apns_max_streams_at_once_per_connection"] = mock_counts(mock)["maxStreamsInFlight"]
    return figures


def start_serve(binary, root, database, device_lists, bench):
    port = bench.free_port()
    env = dict(os.environ, PASSFORGE_DATABASE_URL=database, LOG_LEVEL="warning")
    process = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--registration-limit", "0",
                                "--device-lists", device_lists], cwd=root, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bench.wait_for(port, process, "passforge serve")
    return process, port


def start_nginx(root, upstream_ports, scratch, bench, device_lists):
    """The shipped config with both servers in its upstream, its device lists set as the servers'."""
    original = bench.REPO
    config = os.path.join(scratch, "config")
    os.makedirs(os.path.join(config, "deploy"), exist_ok=True)
    with open(os.path.join(REPO, "deploy", "nginx-passforge.conf")) as f:
        text = f.read()
    servers = "".join(f"    server 127.0.0.1:{p};\n" for p in upstream_ports[1:])
    text = text.replace("    server 127.0.0.1:8080;", "    server 127.0.0.1:8080;\n" + servers.rstrip("\n"), 1)
    text = text.replace("set $passforge_device_lists files;", f"set $passforge_device_lists {device_lists};")
    with open(os.path.join(config, "deploy", "nginx-passforge.conf"), "w") as f:
        f.write(text)
    # bench-serve's nginx, reading the config from the copy with both servers.
    bench.REPO = config
    try:
        return bench.start_nginx(root, upstream_ports[0], scratch)
    finally:
        bench.REPO = original


def tokens_of(root, passes, bench):
    return [bench.token_of(root, f"M-{i:06d}") for i in range(passes)]


REGISTER_SCRIPT = """
local tokens = dofile(TOKENS)
local passes = #tokens
local threads = 0
function setup(thread) thread:set("id", threads); threads = threads + 1 end
function init(args) counter = 0 end
request = function()
  -- A device of its own for every request (window, thread, counter), on the pass counter*threads+id mod passes.
  counter = counter + 1
  local n = counter * 64 + id
  local serial = n % passes
  local device = string.format("wWINDOWt%02dc%010d", id, counter)
  local token = string.format("%016xWINDOW%045x", id + 1, counter)
  return wrk.format("POST", "/v1/devices/" .. device .. "/registrations/TYPE/" .. string.format("M-%06d", serial),
    {["Authorization"] = "ApplePass " .. tokens[serial + 1], ["Content-Type"] = "application/json"},
    '{"pushToken":"' .. token .. '"}')
end
"""


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid):
    """CPU seconds (user + system) a process used so far, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy():
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def register_window(port, scratch, tokens, pass_type, window, seconds, connections, threads):
    """wrk registering new devices through nginx for SECONDS: (registrations, seconds, non-2xx, wrk's CPU s)."""
    lua_tokens = os.path.join(scratch, "tokens.lua")
    if not os.path.exists(lua_tokens):
        with open(lua_tokens, "w") as f:
            f.write("return {" + ",".join(f'"{t}"' for t in tokens) + "}\n")
    path = os.path.join(scratch, f"register-{window}.lua")
    with open(path, "w") as f:
        f.write(REGISTER_SCRIPT.replace("TOKENS", repr(lua_tokens)).replace("WINDOW", f"{window:03d}")
                .replace("TYPE", pass_type).replace("counter * 64", f"counter * {threads}"))
    cpu = children_cpu()
    out = subprocess.run(["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "-s", path,
                          f"http://127.0.0.1:{port}"], capture_output=True, text=True, timeout=seconds + 120).stdout
    done = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", out)
    if not done:
        sys.exit(f"wrk printed no count:\n{out}")
    elapsed = float(done.group(2)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[done.group(3)]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    if errors:
        print(f"  wrk: {errors.group(0)}", file=sys.stderr)
    return int(done.group(1)), elapsed, int(bad.group(1)) if bad else 0, children_cpu() - cpu


def backends_cpu(database):
    """CPU seconds so far of the PostgreSQL backends connected to DATABASE, by pid."""
    cpu = {}
    for pid in psql(database, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                              "AND pid <> pg_backend_pid()").split():
        try:
            cpu[pid] = process_cpu(pid)
        except OSError:
            pass  # ended meanwhile
    return cpu


def register(port, scratch, tokens, pass_type, args, database, pids):
    """Registrations through nginx until the store holds --devices devices (or for --window s after a seed)."""
    start_busy, start_total = machine_busy()
    start_cpu = {name: process_cpu(pid) for name, pid in pids.items()}
    start_backends = backends_cpu(database)
    total, seconds, failures, client_cpu, window = 0, 0.0, 0, 0.0, 0
    while True:
        have = count_devices(database)
        if args.seed and window > 0 or not args.seed and have >= args.devices:
            break
        left = args.window if args.seed else max(2, min(30, (args.devices - have) // max(1, round(total / seconds)
                                                                                              if seconds else 800)))
        done, elapsed, bad, cpu = register_window(port, scratch, tokens, pass_type, window, left, args.lanes, 2)
        total, seconds, failures, client_cpu, window = total + done, seconds + elapsed, failures + bad, \
            client_cpu + cpu, window + 1
        print(f"  {have + done:,} devices ({done / elapsed:,.0f} registrations/s)", file=sys.stderr, flush=True)
    busy, all_ticks = machine_busy()
    backends = sum(cpu - start_backends.get(pid, 0.0) for pid, cpu in backends_cpu(database).items())
    return {
        "registrations": total, "seconds": round(seconds, 1), "registrations_per_s": round(total / seconds),
        "failures": failures, "connections": args.lanes, "load_generator": "wrk, 2 threads",
        "cpu_seconds": {"wrk": round(client_cpu, 1),
                        **{name: round(process_cpu(pid) - start_cpu[name], 1) for name, pid in pids.items()},
                        "PostgreSQL backends": round(backends, 1)},
        "machine_busy": f"{100 * (busy - start_busy) / max(1, all_ticks - start_total):.0f} % of both cores",
    }


def count_devices(database):
    return int(psql(database, "SELECT count(*) FROM devices"))


def psql(url, query):
    return subprocess.run(["psql", url, "-X", "-q", "-t", "-A", "-F", " ", "-c", query],
                          capture_output=True, text=True, check=True).stdout.strip()


def seed(database, devices, passes, pass_type):
    """DEVICES devices with one registration each, written by SQL into the store's own tables (the schema the
    servers migrated): device s<i>, push token i in hex, on pass M-<i mod PASSES>. Returns the seconds taken."""
    start = time.monotonic()
    now = time.time()
    psql(database, f"""
        INSERT INTO devices (library_identifier, push_token, created_at, updated_at, revision)
        SELECT 's' || lpad(i::text, 15, '0'), lpad(to_hex(i), 64, '0'), {now}, {now}, nextval('store_revision')
        FROM generate_series(0, {devices - 1}) AS i;
        INSERT INTO registrations (device_id, pass_type_identifier, serial_number, created_at)
        SELECT d.id, '{pass_type}', 'M-' || lpad((substr(d.library_identifier, 2)::bigint % {passes})::text, 6, '0'),
               {now}
        FROM devices d WHERE d.library_identifier LIKE 's%';
        ANALYZE devices; ANALYZE registrations;""")
    return time.monotonic() - start


def serials_p99(port, database, samples, pass_type, only_http):
    """The p99 (ms) of the serials GET for SAMPLES devices drawn at random from the store (ONLY_HTTP: of those
    registered through HTTP, which have index files), one connection."""
    where = "WHERE library_identifier LIKE 'w%'" if only_http else ""
    devices = psql(database, f"SELECT library_identifier FROM devices {where} ORDER BY random() LIMIT {samples}").split()
    connection = http.client.HTTPConnection("127.0.0.1", port)
    latencies, bad = [], 0
    for device in devices:
        start = time.monotonic()
        connection.request("GET", f"/v1/devices/{device}/registrations/{pass_type}")
        response = connection.getresponse()
        response.read()
        latencies.append((time.monotonic() - start) * 1000)
        bad += response.status != 200
    latencies.sort()
    return latencies[int(len(latencies) * 0.99) - 1], bad


def postgres_size(url):
    query = ("SELECT COALESCE(SUM(pg_table_size(c.oid)), 0), COALESCE(SUM(pg_indexes_size(c.oid)), 0) FROM pg_class c "
             "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()")
    out = subprocess.run(["psql", url, "-X", "-q", "-t", "-A", "-F", " ", "-c", query], capture_output=True, text=True, check=True)
    table, index = (int(x) for x in out.stdout.split())
    return table, index


def fresh_database(url):
    name = f"bench_scale_{os.getpid()}"
    subprocess.run(["psql", url, "-X", "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    base, _, query = url.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "passforge"))
    parser.add_argument("--devices", type=int, default=1_000_000)
    parser.add_argument("--passes", type=int, default=100_000)
    parser.add_argument("--lanes", type=int, default=64, help="connections registering at once (wrk)")
    parser.add_argument("--seed", action="store_true",
                        help="write the --devices devices with SQL into the store's tables, then measure HTTP "
                             "registrations for --window s on top of them")
    parser.add_argument("--window", type=int, default=30, help="with --seed: seconds of HTTP registrations")
    parser.add_argument("--samples", type=int, default=5_000, help="serials GETs for the p99")
    parser.add_argument("--device-lists", choices=["files", "store"], default="files")
    parser.add_argument("--connections", default="1,4", help="APNs connections to compare, e.g. 1,4")
    parser.add_argument("--mock-apns", default=os.path.join(REPO, ".build", "release", "mock-apns"))
    parser.add_argument("--postgres", default=os.environ.get("PASSFORGE_BENCH_POSTGRES_URL")
                        or os.environ.get("PASSFORGE_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    args.connections = [int(x) for x in args.connections.split(",")]
    args.binary = os.path.abspath(args.binary)
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"{args.binary} not found: run `swift build -c release --product passforge` first, or pass --binary")
    if not args.postgres:
        sys.exit("no PostgreSQL: run it under scripts/with-postgres.sh, or pass --postgres URL")
    if not shutil.which("wrk"):
        sys.exit("no wrk (the load generator): apt-get install wrk")
    return args


def measure(args, root, scratch, bench, signing, mock):
    tokens = tokens_of(root, args.passes, bench)
    database = fresh_database(args.postgres)
    processes = []
    try:
        for _ in range(2):
            processes.append(start_serve(args.binary, root, database, args.device_lists, bench))
        nginx, port = start_nginx(root, [p for _, p in processes], scratch, bench, args.device_lists)
        processes.append((nginx, port))
        seeded = None
        if args.seed:
            seconds = seed(database, args.devices, args.passes, bench.TYPE)
            seeded = {"devices": args.devices, "seconds": round(seconds, 1),
                      "how": "SQL into the store's tables (devices, registrations), not through HTTP; "
                             "no index files for them"}
            print(f"seeded {args.devices:,} devices by SQL in {seconds:.0f} s", file=sys.stderr)
        pids = {"serve 1": processes[0][0].pid, "serve 2": processes[1][0].pid, "nginx": nginx.pid}
        registrations = register(port, scratch, tokens, bench.TYPE, args, database, pids)
        devices = count_devices(database)
        files_only = args.seed and args.device_lists == "files"
        p99, bad = serials_p99(port, database, args.samples, bench.TYPE, files_only)
        devices_folder = os.path.join(root, "output", "v1", "devices")
        index_bytes = int(subprocess.run(["du", "-s", "-B1", devices_folder], capture_output=True, text=True)
                          .stdout.split()[0]) if os.path.isdir(devices_folder) else 0
        # With --seed only the devices registered through HTTP have index files.
        with_files = registrations["registrations"] if args.seed else devices
        per_device = index_bytes / max(1, with_files) if args.device_lists == "files" else 0
        table, index = postgres_size(database)
        print(f"  serials p99 {p99:.2f} ms ({bad} not 200); index {index_bytes:,} bytes; PostgreSQL {table:,} bytes "
              f"of tables, {index:,} of indexes", file=sys.stderr, flush=True)
        push = push_phase(args.binary, root, database, mock, args.passes, args.connections) if mock \
            else "not measured (no mock-apns)"
        return {
            "devices": devices, "passes": args.passes, "device_lists": args.device_lists, "seeded": seeded,
            "registrations": registrations,
            "serials_p99_ms": round(p99, 2), "serials_samples": args.samples,
            "serials_of": "devices registered through HTTP (index files)" if files_only else "any device", "serials_not_200": bad,
            "index_bytes": index_bytes, "index_files_counted": with_files if args.device_lists == "files" else 0,
            "index_bytes_per_device": round(per_device), "index_gb_at_1m": round(per_device * 1e6 / 1e9, 2),
            "postgres_table_bytes": table, "postgres_index_bytes": index,
            "load_average_after": os.getloadavg(),
            "goals": GOALS, "push": push,
        }
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait()


def main():
    args = parse_arguments()
    bench = load_script("bench-serve")
    scratch = tempfile.mkdtemp(prefix="passforge-bench-scale-")
    mock = None
    try:
        signing = ["--development-signing"]
        if os.access(args.mock_apns, os.X_OK):
            mock, environment = start_mock_apns(args.mock_apns, bench.TYPE)
            os.environ.update(environment)
            signing = []
        else:
            print(f"no {args.mock_apns}: pushes not measured (swift build -c release --product mock-apns)",
                  file=sys.stderr)
        root = os.path.join(scratch, "project")
        load_script("bench-build").write_project(root, args.passes, "list")
        seconds, _ = load_script("bench-publish").run(args.binary, root, ["build", "--quiet"] + signing, 3600)
        print(f"built {args.passes:,} passes in {seconds:.1f} s (load average {os.getloadavg()[0]:.1f})",
              file=sys.stderr)
        figures = measure(args, root, scratch, bench, signing, mock)
        print(json.dumps({"load_average_at_start": LOAD_AT_START, **figures}, indent=2))
    finally:
        if mock:
            mock.stdin.close()
            mock.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
