"""Builds the wheel of mcpdrill-pypi-probe from its source directory, with the
standard library only (no build backend: this runs where PyPI is not
reachable), byte for byte the same on every run (stored, not deflated, so no zlib
version changes its hash).

    python3 build_wheel.py OUTDIR

writes OUTDIR/mcpdrill_pypi_probe-0.1.0-py3-none-any.whl and prints the
pinned, hashed requirement line that pip --require-hashes takes.
"""

import base64
import hashlib
import os
import sys
import zipfile

NAME, DIST, VERSION = "mcpdrill-pypi-probe", "mcpdrill_pypi_probe", "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, NAME, "src")
EPOCH = (1980, 1, 1, 0, 0, 0)


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main(outdir):
    files = []
    for root, dirs, names in os.walk(os.path.join(SRC, DIST)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in sorted(names):
            if n.endswith(".py"):
                p = os.path.join(root, n)
                with open(p, "rb") as f:
                    files.append((os.path.relpath(p, SRC).replace(os.sep, "/"), f.read()))
    info = DIST + "-" + VERSION + ".dist-info"
    files.append((info + "/METADATA", (
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
        "Summary: A dependency-free MCP server over stdio, for mcpdrill's offline PyPI path test\n"
        "Requires-Python: >=3.8\n" % (NAME, VERSION)).encode()))
    files.append((info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: mcpdrill build_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((info + "/entry_points.txt", ("[console_scripts]\n%s = %s:main\n" % (NAME, DIST)).encode()))
    record = "".join("%s,%s,%d\n" % (n, digest(d), len(d)) for n, d in files) + info + "/RECORD,,\n"
    files.append((info + "/RECORD", record.encode()))

    os.makedirs(outdir, exist_ok=True)
    whl = os.path.join(outdir, "%s-%s-py3-none-any.whl" % (DIST, VERSION))
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_STORED) as z:
        for n, d in files:
            zi = zipfile.ZipInfo(n, EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_STORED
            z.writestr(zi, d)
    with open(whl, "rb") as f:
        print("%s==%s --hash=sha256:%s" % (NAME, VERSION, hashlib.sha256(f.read()).hexdigest()))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build_wheel.py OUTDIR")
    main(sys.argv[1])
