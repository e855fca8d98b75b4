#!/usr/bin/env python3
"""Print what a screenshot holds: "WIDTH HEIGHT COLOURS NONWHITE_PERMILLE",
then, for each #rrggbb given after the file, the pixels of exactly that
colour (usage: png_stats.py FILE.png [#rrggbb ...]).

COLOURS: distinct pixel colours; NONWHITE_PERMILLE: pixels that are not
near-white (any channel below 240), per thousand. Reads 8-bit, non-interlaced
RGB or RGBA PNGs (what Chromium's --screenshot writes) with the standard
library only. Used by tests/t_report_html_browser.c to tell a drawn page
from a blank one. Exit status 2 on a file it cannot read.
"""
import struct
import sys
import zlib


def rows(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, head = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            head = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    if head is None:
        raise ValueError('no IHDR')
    width, height, depth, colour, _, _, interlace = head
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError('unsupported PNG (depth %d, colour type %d, interlace %d)' % (depth, colour, interlace))
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(b''.join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    out = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        out.append(bytes(line))
        prev = line
    return width, height, bpp, out


def main():
    try:
        width, height, bpp, lines = rows(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print('png_stats: %s: %s' % (sys.argv[1] if len(sys.argv) > 1 else '?', e), file=sys.stderr)
        return 2
    try:
        want = [bytes.fromhex(c.lstrip('#')) for c in sys.argv[2:]]
    except ValueError:
        print('png_stats: a colour is not #rrggbb: %s' % ' '.join(sys.argv[2:]), file=sys.stderr)
        return 2
    colours, nonwhite, exact = set(), 0, [0] * len(want)
    for line in lines:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            colours.add(px)
            if min(px) < 240:
                nonwhite += 1
            for i, c in enumerate(want):
                if px == c:
                    exact[i] += 1
    print(' '.join(['%d %d %d %d' % (width, height, len(colours), nonwhite * 1000 // max(1, width * height))] +
                   ['%d' % n for n in exact]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
