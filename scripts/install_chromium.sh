#!/usr/bin/env bash
# Headless Chromium for the browser test of `tomacs view` pages (tests/test_view_browser.py) and the docs'
# screenshots (`make screenshots`): Debian's `chromium` package, driven by Playwright (the [dev] extra), which
# downloads no browser of its own. Does nothing where a Chromium is already on PATH (the names
# tomacs.testing.browser looks for); installing needs root.
#
#   scripts/install_chromium.sh      (`make setup-browser`; `.ci/run` calls it)
set -euo pipefail

die() { echo "install_chromium.sh: $*" >&2; exit 1; }

for name in chromium chromium-browser google-chrome; do
    if command -v "$name" >/dev/null; then
        echo "$name already installed ($(command -v "$name"))"
        exit 0
    fi
done
[[ $(id -u) -eq 0 ]] || die "installing needs root: sudo $0"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    die "apt-get could not install chromium"
fi
rm -f "$log"
echo "installed $(chromium --version 2>/dev/null)"
