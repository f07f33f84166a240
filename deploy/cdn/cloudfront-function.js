// passforge behind Amazon CloudFront: a CloudFront Function (runtime
// cloudfront-js-2.0), associated with the distribution's default cache
// behavior as its *viewer request* function. The default behavior's origin is
// the S3 bucket `passforge publish s3://BUCKET/PREFIX` writes to, reached
// through Origin Access Control (CloudFront signs every origin request; the
// bucket is private). See the README's "Deploying at scale" for the
// distribution: the cache policy, the behaviors that go to `passforge serve`,
// and the custom error response.
//
// EDIT the two values below, then publish the function:
//   PREFIX       the PREFIX of s3://BUCKET/PREFIX with its trailing slash
//                ("tenant-a/"), or "" (or leave "" and set it as the origin path)
//   ORDER_TYPES  your order type identifiers (Wallet Orders), if you publish
//                orders; every other type is a pass type
//
// What it does, before the cache is looked at:
// - GET /v1/passes/<type>/<serial> with `Authorization: ApplePass <token>`
//   (exactly that scheme, one space, 16 to 100 characters of [A-Za-z0-9_-];
//   type and serial by passforge's patterns, so no `/`, no `..`, no
//   percent-encoding) becomes the object by-token/<type>/<serial>.<token>,
//   the cache key holds the token, and the Authorization header is removed.
//   The same for GET /v1/orders/<type>/<id> with `AppleOrder <token>`.
// - Anything else under /v1/passes/ or /v1/orders/ is refused here with
//   passforge serve's own 401 (missing, malformed or wrong-scheme header,
//   malformed name, an order type at a pass URL or a pass type at an order
//   URL: pass and order types share one namespace, so by-token/ cannot tell
//   them apart, and CloudFront Functions cannot look at the bucket).
//   A well-formed token that names no object (wrong token, unknown pass) is
//   refused by the bucket (403: CloudFront may not list it), which the
//   distribution's custom error response turns into the same 401 page.
// - GET /download/<capability>.pkpass|.pkpasses|.order and
//   /download/<type>/<serial>.pkpass|.order: that object. The landing pages
//   beside them the same: download/<capability>.html (the default page),
//   download/<capability>.<language>.html, the logos and badges (.png, .svg);
//   a function cannot ask the bucket which languages a page has, so the
//   default page's links lead to the others, and the distribution's response
//   headers policy adds the pages' headers (README, "Deploying at scale").
// - Everything else: 404, without asking the bucket: .passforge/ (the build
//   state), by-token/ by its own URL, folders, the bucket's listing, any other
//   spelling (CloudFront hands the function the path as the viewer sent it,
//   still percent-encoded, and the patterns admit no `%`).
// The device lists (/v1/devices/…), registrations, /v1/log, offer claims and
// /health are separate cache behaviors whose origin is passforge serve; this
// function never sees them.

var PREFIX = ''; // EDIT
var ORDER_TYPES = []; // EDIT: e.g. ['order.com.example.shop']

var TYPE = '[A-Za-z0-9][A-Za-z0-9.-]{0,254}';
var ID = '[A-Za-z0-9][A-Za-z0-9._~-]{0,127}';
var ITEM = new RegExp('^/v1/(passes|orders)/(' + TYPE + ')/(' + ID + ')$');
var DOWNLOAD = new RegExp('^/download/([A-Za-z0-9_-]{1,100}\\.(pkpass|pkpasses|order|html|png|svg)|'
    + '[A-Za-z0-9_-]{1,100}\\.[A-Za-z0-9_-]{1,35}\\.html|' + TYPE + '/' + ID + '\\.(pkpass|order))$');
var SCHEMES = {
    passes: {token: /^ApplePass ([A-Za-z0-9_-]{16,100})$/, name: 'ApplePass'},
    orders: {token: /^AppleOrder ([A-Za-z0-9_-]{16,100})$/, name: 'AppleOrder'}
};

function handler(event) {
    var request = event.request;
    var uri = request.uri;
    var item = ITEM.exec(uri);
    if (item) {
        return itemRequest(request, item[1], item[2], item[3]);
    }
    if (uri.indexOf('/v1/passes/') === 0) {
        return isRead(request) ? unauthorized('passes') : notAllowed();
    }
    if (uri.indexOf('/v1/orders/') === 0) {
        return isRead(request) ? unauthorized('orders') : notAllowed();
    }
    if (DOWNLOAD.test(uri)) {
        return isRead(request) ? toObject(request, uri.substring(1)) : notAllowed();
    }
    return {statusCode: 404, statusDescription: 'Not Found', headers: {'cache-control': {value: 'no-store'}}};
}

function itemRequest(request, folder, type, id) {
    if (!isRead(request)) {
        return notAllowed();
    }
    var header = request.headers.authorization;
    // Two Authorization headers are malformed, not a choice between them.
    var match = header && !(header.multiValue && header.multiValue.length > 1)
        ? SCHEMES[folder].token.exec(header.value) : null;
    var isOrderType = ORDER_TYPES.indexOf(type) >= 0;
    if (!match || isOrderType !== (folder === 'orders')) {
        return unauthorized(folder);
    }
    return toObject(request, 'by-token/' + type + '/' + id + '.' + match[1]);
}

// The object named `key` under PREFIX, without the Authorization header (an
// ApplePass token is no S3 credential) and without a query (one object, one
// cache entry).
function toObject(request, key) {
    delete request.headers.authorization;
    request.querystring = {};
    request.uri = '/' + PREFIX + key;
    return request;
}

function isRead(request) {
    return request.method === 'GET' || request.method === 'HEAD';
}

function notAllowed() {
    return {
        statusCode: 405, statusDescription: 'Method Not Allowed',
        headers: {'allow': {value: 'GET, HEAD'}, 'cache-control': {value: 'no-store'}}
    };
}

// passforge serve's 401, byte for byte, for every refusal.
function unauthorized(folder) {
    var scheme = SCHEMES[folder].name;
    return {
        statusCode: 401,
        statusDescription: 'Unauthorized',
        headers: {
            'content-type': {value: 'application/json'},
            'www-authenticate': {value: scheme},
            'cache-control': {value: 'no-store'}
        },
        body: {encoding: 'text', data: '{"error":"missing, malformed or wrong Authorization: ' + scheme + ' token"}\n'}
    };
}
