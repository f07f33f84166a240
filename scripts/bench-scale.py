#!/usr/bin/env python3
"""passforge at scale (issue 33, item 4): N devices on P passes, on PostgreSQL,
two `passforge serve` behind nginx (deploy/nginx-passforge.conf as shipped,
its upstream pointed at both servers).

Measures, in one run:
  - registrations per second across the two servers (each device registers
    one pass, through nginx, --lanes connections at once),
  - the p99 of `GET /v1/devices/<device>/registrations/<type>` (the serials
    list) once every device is registered, through nginx,
  - the device indices' footprint on disk (du of v1/devices/; none with
    --device-lists store) and PostgreSQL's tables and indexes,
  - pushes, through the APNs mock as a process (`mock-apns`: HTTP/2, mutual
    TLS, every push answered 200; the project is signed with its test PKI's
    Pass Type ID certificate): a `passforge push` to every device (each pass
    is new since the last push; each device has its own push token), then
    a `passforge build --push` after 1% of the passes changed (devices
    pushed, seconds),
against the issue's goals (>= 2,500 registrations/s, serials p99 <= 20 ms,
<= 4 GB of index on disk at 1,000,000 devices, push of 1% in <= 60 s).

Not measurable: 1 against 4 HTTP/2 connections to APNs. `passforge push`
opens one connection per topic (pass type), with no setting for more; the
mock's count of connections is reported.

The load generator runs on the same cores as the servers, nginx and PostgreSQL.

Usage: scripts/with-postgres.sh scripts/bench-scale.py [--devices N] [--passes N] [--lanes N]
           [--device-lists files|store] [--binary PATH] [--mock-apns PATH] [--postgres URL]
(swift build -c release --product passforge --product mock-apns first; without mock-apns the
project is signed with the development chain and the pushes are not measured.)
"""
import argparse, http.client, json, os, random, shutil, subprocess, sys, tempfile, threading, time

sys.dont_write_bytecode = True
from script_loading import load_script  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
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


def change_one_percent(root, passes):
    """Rewrites the content with every 100th pass's balance changed: 1% of the passes change."""
    with open(f"{root}/content/members.yml", "w") as f:
        f.write("template: card\ndefaults: { data: { tier: Gold } }\npasses:\n")
        for i in range(passes):
            balance = i % 500 + (1000 if i % 100 == 0 else 0)
            f.write(f'  - serialNumber: M-{i:06d}\n    data: {{ name: "Member {i}", balance: {balance} }}\n')
    return len(range(0, passes, 100))


def timed(binary, root, arguments, database):
    """passforge ARGUMENTS in the project with the store; (seconds, its last line)."""
    os.environ["PASSFORGE_DATABASE_URL"] = database
    try:
        return load_script("bench-publish").run(binary, root, arguments, 3600)
    finally:
        del os.environ["PASSFORGE_DATABASE_URL"]


def push_phase(binary, root, database, mock, passes):
    """A push to every device, then build --push after 1% changed: the figures, with the mock's counts."""
    before = mock_counts(mock)
    all_seconds, all_line = timed(binary, root, ["push"], database)
    after_all = mock_counts(mock)
    changed = change_one_percent(root, passes)
    seconds, line = timed(binary, root, ["build", "--push", "--quiet"], database)
    after = mock_counts(mock)
    return {
        "push_all_devices": {"pushes": after_all["pushes"] - before["pushes"], "seconds": round(all_seconds, 1),
                             "per_s": round((after_all["pushes"] - before["pushes"]) / all_seconds), "line": all_line},
        "build_push_after_1_percent": {"passes_changed": changed, "pushes": after["pushes"] - after_all["pushes"],
                                       "seconds": round(seconds, 1), "line": line},
        "apns_connections": after["connections"], "apns_max_streams_at_once": after["maxStreamsInFlight"],
        "one_vs_four_connections": "not measurable: passforge push opens one HTTP/2 connection per pass type",
    }


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


def register_all(port, devices, passes, tokens, lanes, pass_type):
    failures, done = [], [0]
    lock = threading.Lock()

    def lane(k):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        for i in range(k, devices, lanes):
            serial = i % passes
            body = json.dumps({"pushToken": f"{i:064x}"})  # one token per device: one push per device
            connection.request("POST", f"/v1/devices/s{i:015d}/registrations/{pass_type}/M-{serial:06d}", body=body,
                               headers={"Authorization": f"ApplePass {tokens[serial]}", "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            if response.status != 201:
                with lock:
                    failures.append(response.status)
            with lock:
                done[0] += 1
                if done[0] % 20_000 == 0:
                    print(f"  {done[0]:,} registered", file=sys.stderr, flush=True)

    start = time.monotonic()
    threads = [threading.Thread(target=lane, args=(k,)) for k in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return devices / (time.monotonic() - start), failures


def serials_p99(port, devices, samples, pass_type):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    latencies, bad = [], 0
    for i in random.Random(7).sample(range(devices), min(samples, devices)):
        start = time.monotonic()
        connection.request("GET", f"/v1/devices/s{i:015d}/registrations/{pass_type}")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build", "release", "passforge"))
    parser.add_argument("--devices", type=int, default=1_000_000)
    parser.add_argument("--passes", type=int, default=100_000)
    parser.add_argument("--lanes", type=int, default=64)
    parser.add_argument("--samples", type=int, default=5_000, help="serials GETs for the p99")
    parser.add_argument("--device-lists", choices=["files", "store"], default="files")
    parser.add_argument("--mock-apns", default=os.path.join(REPO, ".build", "release", "mock-apns"))
    parser.add_argument("--postgres", default=os.environ.get("PASSFORGE_BENCH_POSTGRES_URL") or os.environ.get("PASSFORGE_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: run `swift build -c release --product passforge` first, or pass --binary")
    if not args.postgres:
        sys.exit("no PostgreSQL: run it under scripts/with-postgres.sh, or pass --postgres URL")
    bench = load_script("bench-serve")
    scratch = tempfile.mkdtemp(prefix="passforge-bench-scale-")
    processes = []
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
        seconds, _ = load_script("bench-publish").run(binary, root, ["build", "--quiet"] + signing, 3600)
        print(f"built {args.passes:,} passes in {seconds:.1f} s", file=sys.stderr)
        tokens = tokens_of(root, args.passes, bench)
        database = fresh_database(args.postgres)
        for _ in range(2):
            processes.append(start_serve(binary, root, database, args.device_lists, bench))
        nginx, port = start_nginx(root, [p for _, p in processes], scratch, bench, args.device_lists)
        processes.append((nginx, port))
        rate, failures = register_all(port, args.devices, args.passes, tokens, args.lanes, bench.TYPE)
        p99, bad = serials_p99(port, args.devices, args.samples, bench.TYPE)
        devices_folder = os.path.join(root, "output", "v1", "devices")
        index_bytes = int(subprocess.run(["du", "-s", "-B1", devices_folder], capture_output=True, text=True).stdout.split()[0]) \
            if os.path.isdir(devices_folder) else 0
        table, index = postgres_size(database)
        per_device = index_bytes / args.devices
        push = push_phase(binary, root, database, mock, args.passes) if mock else "not measured (no mock-apns)"
        print(json.dumps({
            "devices": args.devices, "passes": args.passes, "device_lists": args.device_lists, "lanes": args.lanes,
            "registrations_per_s": round(rate), "registration_failures": len(failures),
            "serials_p99_ms": round(p99, 2), "serials_not_200": bad,
            "index_bytes": index_bytes, "index_bytes_per_device": round(per_device),
            "index_gb_at_1m": round(per_device * 1_000_000 / 1e9, 2),
            "postgres_table_bytes": table, "postgres_index_bytes": index,
            "goals": GOALS, "push": push,
        }, indent=2))
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait()
        if mock:
            mock.stdin.close()
            mock.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
