// passforge behind Cloudflare: a Worker (module syntax) in front of the R2
// bucket `passforge publish s3://BUCKET/PREFIX` writes to (R2's S3 endpoint,
// https://<account>.r2.cloudflarestorage.com, region "auto"). Bindings, as in
// deploy/cdn/wrangler.toml:
//   env.BUCKET        the R2 bucket (an R2 binding: the bucket stays private)
//   env.PREFIX        the PREFIX of s3://BUCKET/PREFIX with its trailing slash, or "" (a var)
//   env.SERVE_ORIGIN  where passforge serve listens, behind its own load
//                     balancer, e.g. https://serve.passes.example.com (a var)
//
// What it answers:
// - GET/HEAD /v1/passes/<type>/<serial> with `Authorization: ApplePass
//   <token>` (exactly that scheme, one space, 16 to 100 characters of
//   [A-Za-z0-9_-]; type and serial by passforge's patterns, so no `/`, no
//   `..`, no percent-encoding): the object by-token/<type>/<serial>.<token>,
//   if v1/passes/<type>/<serial> exists too (pass and order types share one
//   namespace, so by-token/ cannot tell a pass from an order: passforge serve
//   refuses an order's token on a pass URL, and so does this). With ETag,
//   Last-Modified, and 304 for If-None-Match / If-Modified-Since, answered by
//   R2 itself: R2 reads after writes are strongly consistent and nothing is
//   cached in between, so a device never gets a stale pass after a push.
//   The same for /v1/orders/<type>/<id> with `AppleOrder <token>`.
//   Every refusal (no, malformed or wrong token, unknown pass, a name that
//   does not fit) is passforge serve's own 401, byte for byte.
// - GET /v1/devices/<device>/registrations/<type>: the device's index object
//   v1/devices/<type>/<device> if the bucket has one (it lists every pass
//   (order) of the device; the device then makes conditional GETs), else
//   passforge serve's answer from its database (204 for an unknown device).
// - GET /download/…: the add-to-Wallet links; the landing pages beside them
//   (download/<capability>.html: the page in the browser's first language,
//   download/<capability>.<language>.html (fr-CA, then fr) when the build
//   wrote one, else the default page; Vary: Accept-Language), their logos and
//   the project's badges (.png, .svg), with the pages' own headers: no
//   referrer, noindex, their Content-Security-Policy, nosniff.
// - POST/DELETE registrations, POST /v1/log, POST /v1/offers/<offer>/claims
//   and /health: passed to passforge serve, Authorization included.
// - Everything else, .passforge/ (the build state) and by-token/ by their own
//   URL, folders, any other spelling: 404, without asking the bucket.
// The Authorization header never reaches R2 (an R2 binding sends none; only
// the If-* headers are handed to its conditional read).

const TYPE = '[A-Za-z0-9][A-Za-z0-9.-]{0,254}';
const ID = '[A-Za-z0-9][A-Za-z0-9._~-]{0,127}';
const DEVICE = '[A-Za-z0-9]{1,64}';
const ITEM = new RegExp(`^/v1/(passes|orders)/(${TYPE})/(${ID})$`);
const DEVICE_LIST = new RegExp(`^/v1/devices/(${DEVICE})/registrations/(${TYPE})$`);
const REGISTRATION = new RegExp(`^/v1/devices/${DEVICE}/registrations/[^/]+/[^/]+$`);
const CLAIM = /^\/v1\/offers\/[A-Za-z0-9][A-Za-z0-9._-]{0,63}\/claims$/;
const DOWNLOAD = new RegExp(
  `^/download/([A-Za-z0-9_-]{1,100}\\.(pkpass|pkpasses|order)|${TYPE}/${ID}\\.(pkpass|order))$`);
// A landing page, download/<capability>.html; one of its languages, its logo, a badge of the project.
const PAGE = /^\/download\/([A-Za-z0-9_-]{1,100})\.html$/;
const LANDING_FILE = /^\/download\/[A-Za-z0-9_-]{1,100}\.([A-Za-z0-9_-]{1,35}\.html|png|svg)$/;
// The browser's first language (fr-CA), and its base (fr): letters, digits and hyphens only.
const LANGUAGE = /^\s*(([A-Za-z]{1,8})(-[A-Za-z0-9]{1,8})*)/;
// As the pages' own <meta> tags and nginx-passforge.conf: capability URLs must not leak (README, Landing pages).
const LANDING_HEADERS = {
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
  'content-security-policy':
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
};
const SCHEMES = {
  passes: { token: /^ApplePass ([A-Za-z0-9_-]{16,100})$/, name: 'ApplePass' },
  orders: { token: /^AppleOrder ([A-Za-z0-9_-]{16,100})$/, name: 'AppleOrder' },
};
const CONDITIONS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];

export default {
  async fetch(request, env) {
    // The WHATWG parser resolves `.` and `..` segments (%2e too) and decodes nothing else.
    const url = new URL(request.url);
    const path = url.pathname;
    const isRead = request.method === 'GET' || request.method === 'HEAD';
    const item = ITEM.exec(path);
    if (item || path.startsWith('/v1/passes/') || path.startsWith('/v1/orders/')) {
      if (!isRead) return notAllowed('GET, HEAD');
      const folder = item ? item[1] : path.startsWith('/v1/passes/') ? 'passes' : 'orders';
      return item ? itemResponse(request, env, folder, item[2], item[3]) : unauthorized(folder);
    }
    if (REGISTRATION.test(path)) {
      const isChange = request.method === 'POST' || request.method === 'DELETE';
      return isChange ? toServe(request, env, url) : notAllowed('POST, DELETE');
    }
    if (path === '/v1/log' || CLAIM.test(path)) {
      return request.method === 'POST' ? toServe(request, env, url) : notAllowed('POST');
    }
    if (path === '/health') return toServe(request, env, url);
    const list = DEVICE_LIST.exec(path);
    if (list) {
      if (!isRead) return notAllowed('GET, HEAD');
      // The bucket's index object, else passforge serve's answer from its database (204 for an unknown device).
      // The object's key is v1/devices/<type>/<device> (one object per device and type, as on disk), not the URL's.
      const found = await objectResponse(request, env, `v1/devices/${list[2]}/${list[1]}`);
      return found ?? toServe(request, env, url);
    }
    if (DOWNLOAD.test(path)) {
      if (!isRead) return notAllowed('GET, HEAD');
      return (await objectResponse(request, env, path.substring(1))) ?? notFound();
    }
    if (PAGE.test(path) || LANDING_FILE.test(path)) {
      return isRead ? landingResponse(request, env, path) : notAllowed('GET, HEAD');
    }
    return notFound();
  },
};

async function itemResponse(request, env, folder, type, id) {
  const match = SCHEMES[folder].token.exec(request.headers.get('authorization') ?? '');
  if (!match) return unauthorized(folder);
  const prefix = env.PREFIX ?? '';
  const [own, response] = await Promise.all([
    env.BUCKET.head(`${prefix}v1/${folder}/${type}/${id}`),
    objectResponse(request, env, `by-token/${type}/${id}.${match[1]}`),
  ]);
  if (own === null || response === null) {
    await response?.body?.cancel();
    return unauthorized(folder);
  }
  response.headers.set('cache-control', 'private, no-cache');
  return response;
}

// The object `key` under PREFIX: 200, or 304 when the request's validators match; null when there is none.
async function objectResponse(request, env, key) {
  const conditions = new Headers();
  for (const name of CONDITIONS) {
    const value = request.headers.get(name);
    if (value !== null) conditions.set(name, value);
  }
  const object = await env.BUCKET.get(`${env.PREFIX ?? ''}${key}`, { onlyIf: conditions });
  if (object === null) return null;
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set('etag', object.httpEtag);
  headers.set('last-modified', object.uploaded.toUTCString());
  if (!headers.has('cache-control')) headers.set('cache-control', 'no-cache');
  // R2 hands back an object without a body when a precondition failed: for GET and HEAD, not modified.
  if (!('body' in object) || object.body === undefined) return new Response(null, { status: 304, headers });
  if (request.method === 'HEAD') {
    await object.body.cancel();
    headers.set('content-length', String(object.size));
    return new Response(null, { status: 200, headers });
  }
  return new Response(object.body, { status: 200, headers });
}

// A landing page in the first of its languages the browser asks for, else the default page; or a logo or badge.
async function landingResponse(request, env, path) {
  const page = PAGE.exec(path);
  const keys = page ? pageKeys(page[1], request.headers.get('accept-language')) : [path.substring(1)];
  for (const key of keys) {
    const response = await objectResponse(request, env, key);
    if (response === null) continue;
    for (const [name, value] of Object.entries(LANDING_HEADERS)) response.headers.set(name, value);
    if (page) response.headers.set('vary', 'Accept-Language');
    return response;
  }
  return notFound();
}

// download/<name>.fr-CA.html, download/<name>.fr.html, download/<name>.html: a page's language is at most 35
// characters, and neither tag can hold a dot or a slash.
function pageKeys(name, acceptLanguage) {
  const match = LANGUAGE.exec(acceptLanguage ?? '');
  const tags = match ? [...new Set([match[1], match[2]])].filter((tag) => tag.length <= 35) : [];
  return [...tags.map((tag) => `download/${name}.${tag}.html`), `download/${name}.html`];
}

async function toServe(request, env, url) {
  const headers = new Headers(request.headers);
  const client = request.headers.get('cf-connecting-ip');
  if (client) headers.set('x-forwarded-for', client);
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  return fetch(new URL(url.pathname + url.search, env.SERVE_ORIGIN), {
    method: request.method,
    headers,
    body: hasBody ? await request.arrayBuffer() : undefined, // bounded by passforge serve (4 KiB, 64 KiB)
    redirect: 'manual', // never carry Authorization to another host
  });
}

function unauthorized(folder) {
  const scheme = SCHEMES[folder].name;
  return new Response(`{"error":"missing, malformed or wrong Authorization: ${scheme} token"}\n`, {
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': scheme, 'cache-control': 'no-store' },
  });
}

function notAllowed(allow) {
  return new Response(null, { status: 405, headers: { allow, 'cache-control': 'no-store' } });
}

function notFound() {
  return new Response(null, { status: 404, headers: { 'cache-control': 'no-store' } });
}
