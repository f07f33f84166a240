// What the node tests of the CDN fronts share: the cases (cases.json, which scripts/check-cdn.py runs
// against nginx and SeaweedFS too), a bucket that answers like R2 (and, through `originAnswer`, like S3
// behind CloudFront), a passforge serve stand-in, and the checks of one answer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

export const doc = JSON.parse(readFileSync(new URL('./cases.json', import.meta.url), 'utf8'));
export const PREFIX = 'tenant-a/';

/** The type identifiers of the fixture's orders (every v1/orders/<type>/… object). */
export const orderTypes = [...new Set(Object.keys(doc.objects)
  .filter((key) => key.startsWith('v1/orders/')).map((key) => key.split('/')[2]))];

/**
 * An in-memory bucket with the R2 binding's API as Cloudflare documents it: get(key, {onlyIf}) returns
 * null for no object, an object without `body` when a precondition fails (If-None-Match matches, or
 * If-Modified-Since is not older than the upload), else one with `body`; head(key); ETags are MD5 hex,
 * httpEtag quoted; `uploaded` has whole seconds, as Last-Modified does.
 */
export class Bucket {
  constructor(prefix = PREFIX) {
    this.objects = new Map();
    this.asked = [];
    for (const [key, object] of Object.entries(doc.objects)) this.put(prefix + key, object.contentType, object.body);
  }

  put(key, contentType, body) {
    const bytes = Buffer.from(body);
    this.objects.set(key, {
      bytes, contentType, etag: createHash('md5').update(bytes).digest('hex'),
      uploaded: new Date(Math.floor(Date.now() / 1000) * 1000),
    });
  }

  delete(key) { this.objects.delete(key); }

  async head(key) {
    this.asked.push({ call: 'head', key });
    const stored = this.objects.get(key);
    return stored ? this.#object(key, stored, false) : null;
  }

  async get(key, options = {}) {
    this.asked.push({ call: 'get', key, onlyIf: options.onlyIf });
    const stored = this.objects.get(key);
    if (!stored) return null;
    return this.#object(key, stored, !this.#notModified(stored, options.onlyIf));
  }

  #notModified(stored, onlyIf) {
    if (!onlyIf) return false;
    const get = (name) => (onlyIf instanceof Headers ? onlyIf.get(name) : onlyIf[name]) ?? null;
    const ifNoneMatch = get('if-none-match');
    if (ifNoneMatch !== null) {
      return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''))
        .includes(`"${stored.etag}"`);
    }
    const since = get('if-modified-since');
    return since !== null && !Number.isNaN(Date.parse(since)) && stored.uploaded.getTime() <= Date.parse(since);
  }

  #object(key, stored, withBody) {
    const object = {
      key, size: stored.bytes.length, etag: stored.etag, httpEtag: `"${stored.etag}"`, uploaded: stored.uploaded,
      httpMetadata: { contentType: stored.contentType, cacheControl: 'no-cache' },
      writeHttpMetadata(headers) {
        headers.set('content-type', stored.contentType);
        headers.set('cache-control', 'no-cache');
      },
    };
    if (withBody) object.body = new Blob([stored.bytes]).stream();
    return object;
  }
}

/** A passforge serve stand-in on loopback: answers 200 with what it got. */
export async function startServe() {
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const seen = {
        served: 'serve', method: request.method, path: request.url,
        authorization: request.headers.authorization ?? null, body: Buffer.concat(chunks).toString(),
      };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(seen));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The expectation of `c` for one front (`cloudfront` or `worker`), or null when it is skipped there. */
export function expectationFor(c, front) {
  const own = c[front];
  if (own === 'skip') return null;
  return own ?? c.expect;
}

/**
 * Checks one answer ({status, headers: Headers, body: string}) against `expect`, as scripts/check-cdn.py does.
 * `errorPage`: the answer is the distribution's custom error page (CloudFront), not the front's own 401.
 */
export function checkAnswer(c, expect, answer, { errorPage = false } = {}) {
  const what = `${c.name} (${c.method} ${c.path})`;
  const allowed = expect.serve ? [200] : [].concat(expect.status ?? []);
  if (allowed.length) {
    assert.ok(allowed.includes(answer.status), `${what}: answered ${answer.status}, expected ${allowed}`);
  }
  if (expect.object && answer.status === 200) {
    const object = doc.objects[expect.object];
    if (c.method !== 'HEAD') assert.equal(answer.body, object.body, `${what}: not ${expect.object}'s bytes`);
    assert.equal(answer.headers.get('content-type'), object.contentType, `${what}: Content-Type`);
    assert.match(answer.headers.get('cache-control') ?? '', /no-cache/, `${what}: Cache-Control`);
    assert.ok(answer.headers.get('etag') && answer.headers.get('last-modified'), `${what}: ETag, Last-Modified`);
  }
  if (expect.unauthorized) {
    const scheme = expect.unauthorized;
    if (errorPage) {
      assert.equal(answer.body, doc.unauthorized.pass, `${what}: the custom error page`);
    } else {
      assert.equal(answer.body, doc.unauthorized[scheme], `${what}: the ${scheme} 401 body`);
      assert.equal(answer.headers.get('www-authenticate'), scheme === 'pass' ? 'ApplePass' : 'AppleOrder', what);
      assert.equal(answer.headers.get('cache-control'), 'no-store', `${what}: a 401 must not be stored`);
    }
  }
  if (expect.landing) {
    for (const [name, value] of Object.entries(doc.landingHeaders)) {
      assert.equal(answer.headers.get(name), value, `${what}: a landing page's ${name}`);
    }
  }
  if (expect.vary) assert.equal(answer.headers.get('vary'), expect.vary, `${what}: Vary`);
  for (const [name] of answer.headers) assert.ok(!/^(x-amz-|seaweed-|x-accel-)/.test(name), `${what}: header ${name}`);
  if (expect.empty) assert.equal(answer.body, '', `${what}: a body where none is due`);
  if (expect.serve) {
    const seen = JSON.parse(answer.body);
    assert.equal(`${seen.method} ${seen.path}`, `${c.method} ${c.path}`, `${what}: what passforge serve got`);
    assert.equal(seen.authorization, c.headers.Authorization ?? null, `${what}: Authorization at passforge serve`);
    assert.equal(seen.body, c.body ?? '', `${what}: the body at passforge serve`);
  } else if (answer.status !== 200 || !expect.object) {
    for (const secret of doc.secrets) assert.ok(!answer.body.includes(secret), `${what}: the answer shows ${secret}`);
  }
}
