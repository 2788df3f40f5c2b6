#!/usr/bin/env bash
# vendor.sh fetches axe-core, the accessibility engine the browser tests run
# inside each page (cmd/petstore/a11y_browser_test.go), from the npm
# registry (npm pack: no CDN, no node_modules) and keeps only axe.min.js,
# its licence and a VERSION file here. It lives under testdata/ and is
# embedded by a _test.go file only: the product never serves it. The result
# is committed, so the tests run offline; run this again only to change the
# pinned version. Running it twice gives the same files.
set -euo pipefail

AXE=axe-core@4.14.1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$work" && npm pack --silent "$AXE" | tail -n 1)"
mkdir -p "$work/pkg"
tar -xzf "$work/$tarball" -C "$work/pkg" --strip-components=1

cp "$work/pkg/axe.min.js" "$here/axe.min.js"
cp "$work/pkg/LICENSE" "$here/LICENSE"
echo "$AXE" >"$here/VERSION"
chmod 0644 "$here/axe.min.js" "$here/LICENSE" "$here/VERSION"
echo "vendored $AXE into $here"
