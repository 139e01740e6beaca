#!/usr/bin/env bash
# Checks the archives `make release-snapshot` left in dist/: one per platform,
# each listed in checksums.txt with the right SHA-256, and the Linux amd64 binary
# static (CGO_ENABLED=0), built with -trimpath and reporting the snapshot version.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=dist
fail() { echo "release-check: $*" >&2; exit 1; }

[ -f "$dist/checksums.txt" ] || fail "no $dist/checksums.txt"
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64; do
  ext=tar.gz
  case $target in windows_*) ext=zip ;; esac
  n=$(find "$dist" -maxdepth 1 -name "mcpdrill_*_${target}.${ext}" | wc -l)
  [ "$n" -eq 1 ] || fail "$n archive(s) for $target, want 1"
done
lines=$(wc -l < "$dist/checksums.txt")
[ "$lines" -eq 6 ] || fail "checksums.txt lists $lines file(s), want 6"
(cd "$dist" && sha256sum --quiet -c checksums.txt) || fail "a checksum does not match"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
archive=$(find "$dist" -maxdepth 1 -name 'mcpdrill_*_linux_amd64.tar.gz')
tar -xzf "$archive" -C "$work"
for f in mcpdrill LICENSE README.md CHANGELOG.md METHODOLOGY.md; do
  [ -f "$work/$f" ] || fail "$(basename "$archive") has no $f"
done
want=$(basename "$archive" | sed -E 's/^mcpdrill_(.*)_linux_amd64\.tar\.gz$/v\1/')
got=$("$work/mcpdrill" version)
got=${got%%$'\n'*}
[ "$got" = "mcpdrill version $want" ] || fail "the binary says \"$got\", want \"mcpdrill version $want\""
info=$(go version -m "$work/mcpdrill")
grep -q 'CGO_ENABLED=0' <<<"$info" || fail "the binary was not built with CGO_ENABLED=0"
grep -q -- '-trimpath=true' <<<"$info" || fail "the binary was not built with -trimpath"
if grep -q "$(pwd)" "$work/mcpdrill"; then fail "the binary holds the build directory's path"; fi
echo "release-check: 6 archives, checksums match, $want static and trimmed"
