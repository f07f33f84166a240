// deploy/cdn/cloudfront-function.js under node: every case of cases.json through a simulated distribution
// as the README's "Deploying at scale" sets it up. The function runs as CloudFront runs it (a script
// whose `handler` gets the viewer-request event: lowercase header names, `{value}` objects, the path
// as the viewer sent it); what it returns goes to a bucket that answers like S3 behind Origin Access
// Control (403 for a key that is not there: CloudFront may not list the bucket), whose 403 and 404 the
// distribution's custom error response turns into a 401 with the error page. The behaviors whose
// origin is passforge serve are matched by their path patterns, as CloudFront does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import vm from 'node:vm';
import { Bucket, checkAnswer, doc, expectationFor, orderTypes, PREFIX, startServe } from './fixture.mjs';

const source = readFileSync(new URL('../cloudfront-function.js', import.meta.url), 'utf8');
// The README's cache behaviors whose origin is passforge serve; the default behavior runs the function.
const SERVE_BEHAVIORS = ['/v1/devices/*/registrations/*', '/v1/log', '/v1/offers/*/claims', '/health'];
// The default behavior's response headers policy (README): the landing pages' headers, on what the bucket answers.
const RESPONSE_HEADERS_POLICY = doc.landingHeaders;

/** The function with its two EDIT values set, as a deployer sets them. */
function load(prefix, types) {
  const edited = source
    .replace("var PREFIX = ''; // EDIT", `var PREFIX = ${JSON.stringify(prefix)}; // EDIT`)
    .replace('var ORDER_TYPES = []; // EDIT', `var ORDER_TYPES = ${JSON.stringify(types)}; // EDIT`);
  assert.ok(edited.includes(`var PREFIX = ${JSON.stringify(prefix)};`) &&
    edited.includes(`var ORDER_TYPES = ${JSON.stringify(types)};`), 'the EDIT lines changed: update this test');
  return vm.runInNewContext(`${edited}\n;handler`, Object.create(null));
}

function matchesBehavior(pattern, path) {
  const expression = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${expression}$`).test(path);
}

function viewerRequest(c) {
  const [uri, query = ''] = c.path.split(/\?(.*)/s);
  const headers = {};
  for (const [name, value] of Object.entries(c.headers)) headers[name.toLowerCase()] = { value };
  const querystring = {};
  for (const pair of query ? query.split('&') : []) {
    const [name, value = ''] = pair.split('=');
    querystring[name] = { value };
  }
  return { method: c.method, uri, querystring, headers, cookies: {} };
}

function headersOf(object = {}) {
  const headers = new Headers();
  for (const [name, { value }] of Object.entries(object)) headers.set(name, value);
  return headers;
}

describe('CloudFront Function', () => {
  const handler = load(PREFIX, orderTypes);
  const bucket = new Bucket();
  let serve;
  const originKeys = [];
  before(async () => { serve = await startServe(); });
  after(() => serve.close());

  /** The S3 origin, through the distribution's custom error response (403/404 → 401, the error page). */
  function origin(request, method) {
    assert.equal(request.headers.authorization, undefined, 'Authorization must not reach the bucket');
    assert.ok(request.uri.startsWith(`/${PREFIX}`), `the origin request ${request.uri} is outside the prefix`);
    assert.equal(Object.keys(request.querystring).length, 0, 'a query reached the bucket (a listing?)');
    const key = decodeURIComponent(request.uri.substring(1));
    originKeys.push(key);
    const stored = bucket.objects.get(key);
    if (!stored) {
      return { status: 401, headers: new Headers({ 'content-type': 'application/json' }), body: doc.unauthorized.pass,
        errorPage: true };
    }
    const headers = new Headers({
      'content-type': stored.contentType, 'cache-control': 'no-cache', etag: `"${stored.etag}"`,
      'last-modified': stored.uploaded.toUTCString(), ...RESPONSE_HEADERS_POLICY,
    });
    return { status: 200, headers, body: method === 'HEAD' ? '' : stored.bytes.toString() };
  }

  async function distribution(c) {
    const path = c.path.split('?')[0];
    if (SERVE_BEHAVIORS.some((pattern) => matchesBehavior(pattern, path))) {
      const response = await fetch(`http://127.0.0.1:${serve.address().port}${c.path}`,
        { method: c.method, headers: c.headers, body: c.body });
      return { status: response.status, headers: response.headers, body: await response.text() };
    }
    const event = { version: '1.0', context: { eventType: 'viewer-request' }, viewer: { ip: '192.0.2.1' },
      request: viewerRequest(c) };
    const result = handler(event);
    if (result.statusCode !== undefined) {
      return { status: result.statusCode, headers: headersOf(result.headers), body: result.body?.data ?? '' };
    }
    return origin(result, c.method);
  }

  for (const c of doc.cases) {
    const expect = expectationFor(c, 'cloudfront');
    test(c.name + ` (${c.method} ${c.path})`, { skip: expect === null }, async () => {
      const answer = await distribution(c);
      checkAnswer(c, expect, answer, { errorPage: answer.errorPage === true });
    });
  }

  test('the bucket is asked only for items, token names and links under the prefix', () => {
    assert.ok(originKeys.length > 0);
    for (const key of originKeys) {
      assert.match(key, new RegExp(`^${PREFIX}(by-token|download)/`), key);
      assert.ok(!key.includes('..') && !key.includes('//') && !key.includes('.passforge'), key);
    }
  });

  test('two Authorization headers are refused, not chosen between', () => {
    const c = doc.cases.find((one) => one.name === 'pass with its token');
    const request = viewerRequest(c);
    request.headers.authorization.multiValue = [request.headers.authorization, { value: 'ApplePass x' }];
    const result = handler({ version: '1.0', context: { eventType: 'viewer-request' }, request });
    assert.equal(result.statusCode, 401);
  });

  test('with no ORDER_TYPES, every order GET is refused (fail closed) and passes still work', () => {
    const passesOnly = load('', []);
    for (const name of ['order with its token', 'pass with its token']) {
      const c = doc.cases.find((one) => one.name === name);
      const event = { version: '1.0', context: { eventType: 'viewer-request' }, request: viewerRequest(c) };
      const result = passesOnly(event);
      if (name.startsWith('order')) assert.equal(result.statusCode, 401);
      else assert.match(result.uri, /^\/by-token\/pass\.com\.example\.cdn\/S-1\./);
    }
  });

  test('fits CloudFront Functions\' 10 KB of code', () => {
    assert.ok(Buffer.byteLength(source) <= 10240, `${Buffer.byteLength(source)} bytes`);
  });
});
