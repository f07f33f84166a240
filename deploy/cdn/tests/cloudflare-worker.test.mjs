// deploy/cdn/cloudflare-worker.js under node: every case of cases.json through the Worker's own fetch
// handler, with node's Request and Response (the same Fetch API the Workers runtime has), an in-memory
// bucket with the R2 binding's API (fixture.mjs), and a passforge serve stand-in on loopback that the
// Worker reaches with a real fetch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import worker from '../cloudflare-worker.js';
import { Bucket, checkAnswer, doc, expectationFor, PREFIX, startServe } from './fixture.mjs';

const ORIGIN = 'https://passes.example.com';

describe('Cloudflare Worker', () => {
  const bucket = new Bucket();
  const env = { BUCKET: bucket, PREFIX, SERVE_ORIGIN: '' };
  let serve;
  before(async () => {
    serve = await startServe();
    env.SERVE_ORIGIN = `http://127.0.0.1:${serve.address().port}`;
  });
  after(() => serve.close());

  async function ask(method, path, headers = {}, body = undefined) {
    const response = await worker.fetch(new Request(ORIGIN + path, { method, headers, body }), env);
    return { status: response.status, headers: response.headers, body: method === 'HEAD' ? '' : await response.text() };
  }

  for (const c of doc.cases) {
    const expect = expectationFor(c, 'worker');
    test(c.name + ` (${c.method} ${c.path})`, { skip: expect === null }, async () => {
      checkAnswer(c, expect, await ask(c.method, c.path, c.headers, c.body));
    });
  }

  test('the bucket is asked only under the prefix, never for .passforge/, never with Authorization', () => {
    assert.ok(bucket.asked.length > 0);
    for (const { key, onlyIf } of bucket.asked) {
      assert.match(key, new RegExp(`^${PREFIX}(v1/passes|v1/orders|v1/devices|by-token|download)/`), key);
      assert.ok(!key.includes('..') && !key.includes('//') && !key.includes('.passforge'), key);
      assert.ok(!onlyIf || !onlyIf.has('authorization'), 'Authorization handed to R2');
    }
  });

  test('304 by ETag and If-Modified-Since; a change is the next answer; a removal 401, then back', async () => {
    const c = doc.cases.find((one) => one.name === 'pass with its token');
    const key = PREFIX + c.expect.object;
    const first = await ask('GET', c.path, c.headers);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag');
    const modified = first.headers.get('last-modified');
    assert.equal((await ask('GET', c.path, { ...c.headers, 'If-None-Match': etag })).status, 304);
    assert.equal((await ask('GET', c.path, { ...c.headers, 'If-Modified-Since': modified })).status, 304);
    assert.equal((await ask('GET', c.path, { ...c.headers, 'If-None-Match': '"other"' })).status, 200);

    bucket.put(key, 'application/vnd.apple.pkpass', 'PASS S-1 version 2, after a push');
    const changed = await ask('GET', c.path, { ...c.headers, 'If-None-Match': etag });
    assert.equal(changed.status, 200);
    assert.equal(changed.body, 'PASS S-1 version 2, after a push');
    assert.notEqual(changed.headers.get('etag'), etag);

    bucket.delete(key);
    const removed = await ask('GET', c.path, c.headers);
    assert.equal(removed.status, 401);
    assert.equal(removed.body, doc.unauthorized.pass);
    bucket.put(key, 'application/vnd.apple.pkpass', 'PASS S-1 version 3, published again');
    assert.equal((await ask('GET', c.path, c.headers)).body, 'PASS S-1 version 3, published again');
  });
});
