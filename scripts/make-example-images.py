#!/usr/bin/env python3
"""Draw the example project's PNG images.

Pure Python 3 standard library (zlib + struct): no Pillow, nothing to
install. Run it from anywhere; it writes into the repository that holds it:

    python3 scripts/make-example-images.py          # write every image
    python3 scripts/make-example-images.py --check  # exit 1 if any is stale

Every image is drawn at @1x, @2x and @3x from one description in points, at
the sizes Apple documents (icon 29x29, logo up to 160x50, footer 286x15,
thumbnail 90x90, strip 375x98 on event tickets and 375x144 on coupons and
store cards). The pictures are flat colours and simple shapes with
anti-aliased edges, written as RGBA with PNG filter 0 so they compress to a
few kilobytes. A file whose pixels are already right is left alone, so a
rerun leaves git with nothing to commit even where another zlib would
compress the same pixels to other bytes.

The member card's strip carries words, so it is localized: it exists in
en.lproj and de.lproj and not at the top level (an image must not be both).
"""

import math
import os
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALES = (1, 2, 3)


# --------------------------------------------------------------------------
# PNG encoding


def scanlines(width, height, rgba):
    """The bytes PNG compresses: each row prefixed with filter type 0."""
    stride = width * 4
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        raw += rgba[y * stride:(y + 1) * stride]
    return bytes(raw)


def png_pixels(data):
    """(IHDR fields, decompressed scanlines) of a PNG file, or None."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, ihdr, idat = 8, None, bytearray()
    try:
        while pos + 8 <= len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                ihdr = body
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        return ihdr, zlib.decompress(bytes(idat))
    except (struct.error, zlib.error):
        return None


def png_bytes(width, height, rgba):
    """RGBA 8-bit, non-interlaced, filter 0 on every row."""
    raw = scanlines(width, height, rgba)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


# --------------------------------------------------------------------------
# Canvas: coordinates in points, pixels at `scale` per point.


def clamp01(v):
    return 0.0 if v < 0.0 else 1.0 if v > 1.0 else v


def rgba(colour):
    return tuple(colour) if len(colour) == 4 else tuple(colour) + (255,)


class Canvas:
    def __init__(self, width_pt, height_pt, scale, background=(0, 0, 0, 0)):
        self.s = scale
        self.w = int(round(width_pt * scale))
        self.h = int(round(height_pt * scale))
        self.px = bytearray(bytes(rgba(background)) * (self.w * self.h))

    # One pixel, source-over with straight alpha.
    def blend(self, x, y, colour, coverage):
        a = colour[3] / 255.0 * coverage
        if a <= 0.0:
            return
        i = (y * self.w + x) * 4
        px = self.px
        if a >= 0.999:
            px[i:i + 4] = bytes((colour[0], colour[1], colour[2], 255))
            return
        da = px[i + 3] / 255.0
        oa = a + da * (1.0 - a)
        for k in range(3):
            px[i + k] = int(round((colour[k] * a + px[i + k] * da * (1.0 - a)) / oa))
        px[i + 3] = int(round(oa * 255.0))

    def span(self, y, x0, x1, colour):
        """Opaque run of pixels [x0, x1) on row y."""
        if x1 > x0:
            i = (y * self.w + x0) * 4
            self.px[i:i + (x1 - x0) * 4] = bytes(colour[:3] + (255,)) * (x1 - x0)

    def fill(self, colour):
        self.rect(0, 0, self.w / self.s, self.h / self.s, colour)

    def rect(self, x0, y0, x1, y1, colour):
        """Axis-aligned rectangle in points, exact area coverage at its edges."""
        colour = rgba(colour)
        s = self.s
        X0, X1, Y0, Y1 = x0 * s, x1 * s, y0 * s, y1 * s
        cols = []
        for x in range(max(0, int(math.floor(X0))), min(self.w, int(math.ceil(X1)))):
            cols.append((x, clamp01(min(X1, x + 1) - max(X0, x))))
        if not cols:
            return
        full = [x for x, c in cols if c >= 1.0]
        ix0, ix1 = (full[0], full[-1] + 1) if full else (0, 0)
        for y in range(max(0, int(math.floor(Y0))), min(self.h, int(math.ceil(Y1)))):
            cy = clamp01(min(Y1, y + 1) - max(Y0, y))
            if cy >= 1.0 and colour[3] == 255 and full:
                self.span(y, ix0, ix1, colour)
                for x, c in cols:
                    if c < 1.0:
                        self.blend(x, y, colour, c)
            else:
                for x, c in cols:
                    self.blend(x, y, colour, c * cy)

    def shape(self, shape, colour):
        """Fill a signed-distance shape (distances in points)."""
        colour = rgba(colour)
        fn, (bx0, by0, bx1, by1) = shape
        s = self.s
        xa, xb = max(0, int(math.floor(bx0 * s)) - 1), min(self.w, int(math.ceil(bx1 * s)) + 1)
        ya, yb = max(0, int(math.floor(by0 * s)) - 1), min(self.h, int(math.ceil(by1 * s)) + 1)
        for y in range(ya, yb):
            py = (y + 0.5) / s
            run = None
            for x in range(xa, xb):
                cov = 0.5 - fn((x + 0.5) / s, py) * s
                if cov >= 1.0 and colour[3] == 255:
                    if run is None:
                        run = x
                    continue
                if run is not None:
                    self.span(y, run, x, colour)
                    run = None
                if cov > 0.0:
                    self.blend(x, y, colour, min(cov, 1.0))
            if run is not None:
                self.span(y, run, xb, colour)

    def text(self, x, y, string, height, colour, align="left"):
        """Block letters from the 5x7 font below; `height` in points, `y` the top,
        `colour` opaque.

        Cell edges snap to whole pixels, so strokes stay sharp at every scale."""
        colour = rgba(colour)
        cell = height * self.s / 7.0
        width = text_width_pt(string, height) * self.s
        ox = x * self.s - (width if align == "right" else width / 2 if align == "center" else 0)
        oy = y * self.s

        def edge(origin, k):
            return int(round(origin + k * cell))
        for n, ch in enumerate(string.upper()):
            for r, row in enumerate(FONT[ch]):
                for k, bit in enumerate(row):
                    if bit == "#":
                        gx0, gx1 = edge(ox, n * 6 + k), edge(ox, n * 6 + k + 1)
                        gy0, gy1 = edge(oy, r), edge(oy, r + 1)
                        for gy in range(gy0, gy1):
                            if 0 <= gy < self.h:
                                self.span(gy, max(0, gx0), min(self.w, gx1), colour)

    def png(self):
        return png_bytes(self.w, self.h, self.px)


def text_width_pt(string, height):
    return (len(string) * 6 - 1) * height / 7.0 if string else 0.0


# --------------------------------------------------------------------------
# Signed-distance shapes: (function(x, y) -> distance, bounding box), points.


def circle(cx, cy, r):
    return (lambda x, y: math.hypot(x - cx, y - cy) - r, (cx - r, cy - r, cx + r, cy + r))


def ring(cx, cy, r, half_width):
    o = r + half_width
    return (lambda x, y: abs(math.hypot(x - cx, y - cy) - r) - half_width, (cx - o, cy - o, cx + o, cy + o))


def ellipse(cx, cy, rx, ry, degrees=0.0):
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    m = max(rx, ry)

    def fn(x, y):
        dx, dy = x - cx, y - cy
        u, v = dx * c + dy * s, -dx * s + dy * c
        return (math.hypot(u / rx, v / ry) - 1.0) * min(rx, ry)
    return (fn, (cx - m, cy - m, cx + m, cy + m))


def round_rect(x0, y0, x1, y1, r):
    cx, cy, hw, hh = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2

    def fn(x, y):
        qx, qy = abs(x - cx) - (hw - r), abs(y - cy) - (hh - r)
        return math.hypot(max(qx, 0.0), max(qy, 0.0)) + min(max(qx, qy), 0.0) - r
    return (fn, (x0, y0, x1, y1))


def capsule(ax, ay, bx, by, r):
    vx, vy = bx - ax, by - ay
    ll = vx * vx + vy * vy or 1e-9

    def fn(x, y):
        t = max(0.0, min(1.0, ((x - ax) * vx + (y - ay) * vy) / ll))
        return math.hypot(x - ax - t * vx, y - ay - t * vy) - r
    return (fn, (min(ax, bx) - r, min(ay, by) - r, max(ax, bx) + r, max(ay, by) + r))


def polygon(points):
    """Convex polygon, either winding."""
    area = sum(points[i][0] * points[(i + 1) % len(points)][1] - points[(i + 1) % len(points)][0] * points[i][1]
               for i in range(len(points)))
    sign = 1.0 if area > 0 else -1.0
    edges = []
    for i, (ax, ay) in enumerate(points):
        bx, by = points[(i + 1) % len(points)]
        ex, ey = bx - ax, by - ay
        n = math.hypot(ex, ey) or 1e-9
        edges.append((ax, ay, sign * ey / n, -sign * ex / n))   # outward normal

    def fn(x, y):
        return max((x - ax) * nx + (y - ay) * ny for ax, ay, nx, ny in edges)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (fn, (min(xs), min(ys), max(xs), max(ys)))


def intersect(a, b):
    (fa, ba), (fb, bb) = a, b
    return (lambda x, y: max(fa(x, y), fb(x, y)),
            (max(ba[0], bb[0]), max(ba[1], bb[1]), min(ba[2], bb[2]), min(ba[3], bb[3])))


class Frame:
    """Maps a unit square (0..1), optionally rotated, onto a box in points."""

    def __init__(self, x, y, size, degrees=0.0):
        self.x, self.y, self.k = x, y, size
        self.c, self.s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))

    def p(self, u, v):
        du, dv = u - 0.5, v - 0.5
        return (self.x + (0.5 + du * self.c - dv * self.s) * self.k,
                self.y + (0.5 + du * self.s + dv * self.c) * self.k)

    def d(self, length):
        return length * self.k

    def poly(self, *uv):
        return polygon([self.p(u, v) for u, v in uv])

    def capsule(self, u0, v0, u1, v1, r):
        return capsule(*self.p(u0, v0), *self.p(u1, v1), self.d(r))

    def circle(self, u, v, r):
        return circle(*self.p(u, v), self.d(r))

    def ring(self, u, v, r, w):
        return ring(*self.p(u, v), self.d(r), self.d(w))

    def ellipse(self, u, v, ru, rv, degrees=0.0):
        return ellipse(*self.p(u, v), self.d(ru), self.d(rv), degrees + math.degrees(math.atan2(self.s, self.c)))


# --------------------------------------------------------------------------
# Glyphs, each drawn into the unit square of a Frame.


def plane(c, f, colour):
    c.shape(f.capsule(0.12, 0.5, 0.86, 0.5, 0.065), colour)
    c.shape(f.poly((0.56, 0.5), (0.34, 0.1), (0.44, 0.1), (0.72, 0.5)), colour)
    c.shape(f.poly((0.56, 0.5), (0.72, 0.5), (0.44, 0.9), (0.34, 0.9)), colour)
    c.shape(f.poly((0.14, 0.5), (0.07, 0.27), (0.14, 0.27), (0.26, 0.5)), colour)
    c.shape(f.poly((0.14, 0.5), (0.26, 0.5), (0.14, 0.73), (0.07, 0.73)), colour)


def leaf(c, f, colour, vein):
    # A lens: the intersection of two circles through (0.2, 0.8) and (0.8, 0.2).
    c.shape(intersect(f.circle(0.5 + 0.177, 0.5 + 0.177, 0.492), f.circle(0.5 - 0.177, 0.5 - 0.177, 0.492)), colour)
    c.shape(f.capsule(0.2, 0.8, 0.08, 0.92, 0.035), colour)
    c.shape(f.capsule(0.27, 0.73, 0.68, 0.32, 0.022), vein)


def note(c, f, colour):
    c.shape(f.ellipse(0.38, 0.72, 0.16, 0.115, -20), colour)
    c.shape(f.capsule(0.515, 0.7, 0.515, 0.17, 0.035), colour)
    c.shape(f.poly((0.48, 0.14), (0.56, 0.14), (0.8, 0.36), (0.76, 0.47), (0.55, 0.31)), colour)


def cup(c, f, colour, hole):
    c.shape(f.ring(0.72, 0.55, 0.11, 0.035), colour)
    c.shape(f.poly((0.2, 0.38), (0.72, 0.38), (0.66, 0.78), (0.26, 0.78)), colour)
    c.shape(f.capsule(0.14, 0.85, 0.78, 0.85, 0.035), colour)
    for u in (0.34, 0.46, 0.58):
        c.shape(f.capsule(u, 0.3, u + 0.04, 0.14, 0.025), colour)
    if hole is not None:
        c.shape(f.poly((0.27, 0.44), (0.65, 0.44), (0.645, 0.47), (0.275, 0.47)), hole)


def mountains(c, f, front, back, snow):
    c.shape(f.poly((0.42, 0.78), (0.66, 0.38), (0.92, 0.78)), back)
    c.shape(f.poly((0.08, 0.78), (0.40, 0.24), (0.72, 0.78)), front)
    c.shape(f.poly((0.315, 0.383), (0.40, 0.24), (0.485, 0.383)), snow)
    c.shape(f.capsule(0.1, 0.87, 0.9, 0.87, 0.035), front)


def bean(c, x, y, length, degrees, colour, crease):
    c.shape(ellipse(x, y, length / 2, length / 3, degrees), colour)
    a = math.radians(degrees)
    dx, dy = math.cos(a) * length * 0.3, math.sin(a) * length * 0.3
    c.shape(capsule(x - dx, y - dy, x + dx, y + dy, length * 0.035), crease)


# --------------------------------------------------------------------------
# Brands

NAVY, SKY, WHITE = (18, 52, 110), (120, 190, 255), (255, 255, 255)
GREEN, DARK_GREEN, PALE_GREEN = (46, 125, 50), (27, 94, 32), (200, 230, 201)
NIGHT, GOLD = (30, 20, 60), (255, 200, 90)
BROWN, CREAM, LATTE = (78, 52, 46), (255, 248, 225), (215, 180, 140)
TEAL, PALE_TEAL = (0, 96, 100), (178, 235, 242)


def boarding_icon(c):
    c.fill(NAVY)
    plane(c, Frame(3, 3, 23, -35), WHITE)


def boarding_logo(c):
    c.shape(circle(24, 25, 20), SKY)
    plane(c, Frame(10, 11, 28, -35), NAVY)
    c.text(52, 9, "SKYLARK", 17, WHITE)
    c.text(53, 32, "AIR", 9, SKY)


def boarding_footer(c):
    x = 2.0
    while x < 284:
        if not 124 <= x <= 158:
            c.rect(x, 7, x + 5, 8.2, SKY + (200,))
        x += 9
    plane(c, Frame(133.5, 0, 15), SKY)


def coupon_icon(c):
    c.fill(GREEN)
    leaf(c, Frame(4, 4, 21), WHITE, GREEN)


def coupon_logo(c):
    c.shape(circle(22, 25, 19), PALE_GREEN)
    leaf(c, Frame(10, 13, 24), GREEN, PALE_GREEN)
    c.text(48, 11, "GREENLEAF", 14, WHITE)
    c.text(49, 31, "MARKET", 9, PALE_GREEN)


def coupon_strip(c):
    c.fill((56, 142, 60))
    c.rect(0, 132, 375, 144, DARK_GREEN)
    # an orange, an apple and a lemon on the right; the left stays calm for the text
    c.shape(ellipse(252, 110, 24, 17, -18), (253, 216, 53))
    c.shape(circle(302, 82, 36), (251, 140, 0))
    c.shape(circle(291, 68, 8), (255, 183, 77))
    leaf(c, Frame(296, 32, 22, 10), (129, 199, 132), (56, 142, 60))
    c.shape(circle(350, 50, 27), (211, 47, 47))
    c.shape(circle(341, 41, 6), (239, 83, 80))
    c.shape(capsule(350, 24, 355, 13, 2), (93, 64, 55))


def concert_icon(c):
    c.fill(NIGHT)
    note(c, Frame(3, 3, 23), GOLD)


def concert_logo(c):
    c.shape(circle(20, 25, 18), GOLD)
    note(c, Frame(8, 13, 24), NIGHT)
    c.text(45, 12, "HARBOUR HALL", 10.5, WHITE)
    c.text(46, 29, "LIVE", 9, GOLD)


def concert_strip(c):
    top, bottom = (40, 20, 80), (122, 32, 110)
    bands = 7
    for i in range(bands):
        t = i / (bands - 1)
        colour = tuple(int(round(top[k] + (bottom[k] - top[k]) * t)) for k in range(3))
        c.rect(0, 98 * i / bands, 375, 98 * (i + 1) / bands, colour)
    for x in (60, 190, 320):
        c.shape(polygon([(x - 3, 0), (x + 3, 0), (x + 48, 98), (x - 48, 98)]), GOLD + (55,))
        c.shape(circle(x, 2, 6), GOLD)
    crowd = (14, 8, 28)
    c.rect(0, 88, 375, 98, crowd)
    x, n = 6.0, 0
    while x < 375:
        c.shape(circle(x, 86 + (n * 7) % 5, 8), crowd)
        if n % 5 == 2:
            c.shape(capsule(x + 5, 84, x + 10, 62, 2.2), crowd)
            c.shape(circle(x + 10.5, 61, 3.2), crowd)
        x += 15
        n += 1


def member_icon(c):
    c.fill(BROWN)
    cup(c, Frame(3, 3, 23), CREAM, None)


def member_logo(c):
    c.shape(circle(22, 25, 19), LATTE)
    cup(c, Frame(10, 12, 24), BROWN, LATTE)
    c.text(48, 13, "BEAN & LEAF", 11, CREAM)
    c.text(49, 30, "COFFEE", 9, LATTE)


def member_strip(tagline):
    def draw(c):
        c.fill((109, 76, 65))
        c.rect(0, 104, 375, 144, (93, 64, 55))
        for x, y, length, degrees in ((292, 34, 34, 30), (338, 62, 30, -25), (262, 74, 26, 70),
                                      (352, 18, 24, 110), (316, 92, 22, 10)):
            bean(c, x, y, length, degrees, (62, 39, 35), (141, 110, 99))
        for i in range(10):
            x = 20 + i * 19
            if i == 9:
                c.shape(circle(x, 124, 7.5), GOLD)
            else:
                c.shape(ring(x, 124, 6.5, 1.0), LATTE)
        c.text(364, 120, tagline, 9, CREAM, align="right")
    return draw


def generic_icon(c):
    c.fill(TEAL)
    mountains(c, Frame(3, 2, 24), WHITE, PALE_TEAL, TEAL)


def generic_logo(c):
    c.shape(circle(20, 25, 18), PALE_TEAL)
    mountains(c, Frame(7, 11, 26), TEAL, (77, 182, 172), WHITE)
    c.text(44, 14, "FJORD DEV DAYS", 9, WHITE)
    c.text(45, 29, "2026", 9, PALE_TEAL)


def generic_thumbnail(c):
    card = round_rect(0, 0, 90, 90, 12)
    c.shape(card, PALE_TEAL)
    c.shape(intersect(circle(45, 100, 36), card), (77, 182, 172))
    c.shape(circle(45, 38, 17), (77, 182, 172))


def avatar(background, hair, skin, shirt):
    def draw(c):
        card = round_rect(0, 0, 90, 90, 12)
        c.shape(card, background)
        c.shape(intersect(circle(45, 102, 38), card), shirt)
        c.shape(polygon([(38, 52), (52, 52), (52, 68), (38, 68)]), skin)
        c.shape(circle(45, 34, 21), hair)
        c.shape(ellipse(45, 40, 15.5, 18), skin)
        c.shape(ellipse(45, 23, 16, 7), hair)
        for x in (39, 51):
            c.shape(circle(x, 39, 1.8), (40, 30, 30))
        c.shape(intersect(ring(45, 44, 6, 0.9), polygon([(36, 46), (54, 46), (54, 56), (36, 56)])), (150, 60, 60))
    return draw


# --------------------------------------------------------------------------
# What to draw where: (path without ".png", width pt, height pt, drawing)

IMAGES = [
    ("templates/boarding/icon", 29, 29, boarding_icon),
    ("templates/boarding/logo", 160, 50, boarding_logo),
    ("templates/boarding/footer", 286, 15, boarding_footer),

    ("templates/coupon/icon", 29, 29, coupon_icon),
    ("templates/coupon/logo", 160, 50, coupon_logo),
    ("templates/coupon/strip", 375, 144, coupon_strip),

    ("templates/concert/icon", 29, 29, concert_icon),
    ("templates/concert/logo", 160, 50, concert_logo),
    ("templates/concert/strip", 375, 98, concert_strip),

    ("templates/member/icon", 29, 29, member_icon),
    ("templates/member/logo", 160, 50, member_logo),
    # Localized: one strip per .lproj and none at the top level.
    ("templates/member/en.lproj/strip", 375, 144, member_strip("10TH CUP FREE")),
    ("templates/member/de.lproj/strip", 375, 144, member_strip("10. TASSE GRATIS")),

    ("templates/generic/icon", 29, 29, generic_icon),
    ("templates/generic/logo", 160, 50, generic_logo),
    ("templates/generic/thumbnail", 90, 90, generic_thumbnail),

    # A per-pass image: the speaker's "photo" on her badge (content/badges/amara-okafor.yml).
    ("content/badges/photos/amara-okafor", 90, 90,
     avatar((255, 224, 178), (45, 30, 25), (141, 85, 60), (0, 121, 107))),
]


# --------------------------------------------------------------------------
# 5x7 block font: just the characters the images use.

FONT = {}


def _glyphs(spec):
    lines = [ln for ln in spec.strip("\n").split("\n")]
    for i in range(0, len(lines), 8):
        FONT[lines[i][0]] = lines[i + 1:i + 8]


_glyphs("""
A
.###.
#...#
#...#
#####
#...#
#...#
#...#
B
####.
#...#
#...#
####.
#...#
#...#
####.
C
.###.
#...#
#....
#....
#....
#...#
.###.
D
####.
#...#
#...#
#...#
#...#
#...#
####.
E
#####
#....
#....
####.
#....
#....
#####
F
#####
#....
#....
####.
#....
#....
#....
G
.###.
#...#
#....
#.###
#...#
#...#
.####
H
#...#
#...#
#...#
#####
#...#
#...#
#...#
I
.###.
..#..
..#..
..#..
..#..
..#..
.###.
J
..###
...#.
...#.
...#.
...#.
#..#.
.##..
K
#...#
#..#.
#.#..
##...
#.#..
#..#.
#...#
L
#....
#....
#....
#....
#....
#....
#####
M
#...#
##.##
#.#.#
#.#.#
#...#
#...#
#...#
N
#...#
#...#
##..#
#.#.#
#..##
#...#
#...#
O
.###.
#...#
#...#
#...#
#...#
#...#
.###.
P
####.
#...#
#...#
####.
#....
#....
#....
Q
.###.
#...#
#...#
#...#
#.#.#
#..#.
.##.#
R
####.
#...#
#...#
####.
#.#..
#..#.
#...#
S
.####
#....
#....
.###.
....#
....#
####.
T
#####
..#..
..#..
..#..
..#..
..#..
..#..
U
#...#
#...#
#...#
#...#
#...#
#...#
.###.
V
#...#
#...#
#...#
#...#
#...#
.#.#.
..#..
W
#...#
#...#
#...#
#.#.#
#.#.#
#.#.#
.#.#.
X
#...#
#...#
.#.#.
..#..
.#.#.
#...#
#...#
Y
#...#
#...#
.#.#.
..#..
..#..
..#..
..#..
Z
#####
....#
...#.
..#..
.#...
#....
#####
0
.###.
#...#
#..##
#.#.#
##..#
#...#
.###.
1
..#..
.##..
..#..
..#..
..#..
..#..
.###.
2
.###.
#...#
....#
...#.
..#..
.#...
#####
3
#####
...#.
..#..
...#.
....#
#...#
.###.
4
...#.
..##.
.#.#.
#..#.
#####
...#.
...#.
5
#####
#....
####.
....#
....#
#...#
.###.
6
..##.
.#...
#....
####.
#...#
#...#
.###.
7
#####
....#
...#.
..#..
.#...
.#...
.#...
8
.###.
#...#
#...#
.###.
#...#
#...#
.###.
9
.###.
#...#
#...#
.####
....#
...#.
.##..
&
.##..
#..#.
#.#..
.#...
#.#.#
#..#.
.##.#
.
.....
.....
.....
.....
.....
.##..
.##..
-
.....
.....
.....
.###.
.....
.....
.....
""")
FONT[" "] = ["....."] * 7


# --------------------------------------------------------------------------


def main(argv):
    check = "--check" in argv
    stale = []
    for stem, width, height, draw in IMAGES:
        for scale in SCALES:
            canvas = Canvas(width, height, scale)
            draw(canvas)
            data = canvas.png()
            path = os.path.join(ROOT, stem + ("" if scale == 1 else "@%dx" % scale) + ".png")
            try:
                with open(path, "rb") as f:
                    same = png_pixels(f.read()) == png_pixels(data)
            except FileNotFoundError:
                same = False
            if same:
                continue
            stale.append(os.path.relpath(path, ROOT))
            if not check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                tmp = path + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
    for path in stale:
        print(("stale: " if check else "wrote: ") + path)
    if check and stale:
        print("run scripts/make-example-images.py to regenerate", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
