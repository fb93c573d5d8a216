#!/usr/bin/env python3
"""Writes the example vault's one PDF, a boiler service report, with no third-party packages.

The file is a hand-built PDF 1.4: one A4 page, the standard Helvetica font (not embedded),
11 pt text with 15 pt leading, and an uncompressed content stream, so any PDF reader and
mdvault's text extraction see exactly the lines below. Two runs give identical bytes.

Usage: python3 examples/make_pdf.py   (run from anywhere; it writes into examples/vault)
"""

import os

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "vault", "Home", "Files", "2026-02-11 Hearthwell Heating - Service Report.pdf",
)

LINES = [
    "Hearthwell Heating - Annual Boiler Service Report",
    "Hearthwell Heating Ltd, 8 Tanner's Yard, Brookmere BM4 7QT",
    "",
    "Customer: Sam Okafor, Flat 3, 17 Harrow Lane, Brookmere BM2 5RL",
    "Appliance: Corran Ecoheat 30 combination boiler, serial CE30-4471-0926",
    "Date of visit: 11 February 2026",
    "Engineer: Ruth Adeyemi, registration number HH-ENG-2291",
    "",
    "Checks and readings",
    "Flue gas analysis: CO 38 ppm, CO2 9.1 percent, ratio 0.0042 (pass)",
    "Working gas pressure at the appliance: 20.4 mbar",
    "Expansion vessel recharged to 1.0 bar",
    "",
    "Work done",
    "Replaced the ignition electrode (part HW-IE-204) after a slow start fault.",
    "Cleaned the condensate trap and checked all seals.",
    "",
    "Next service due: February 2027. Labour is free within 90 days of this visit",
    "if the same fault returns.",
]


def escape(text):
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build():
    stream = ["BT", "/F1 11 Tf", "15 TL", "56 780 Td"]
    for line in LINES:
        stream.append(f"({escape(line)}) Tj T*")
    stream.append("ET")
    content = "\n".join(stream).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


if __name__ == "__main__":
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "wb") as f:
        f.write(build())
    print(OUT)
