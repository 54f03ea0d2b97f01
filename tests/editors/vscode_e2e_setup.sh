#!/usr/bin/env bash
# Installs what tests/editors/test_vscode_real.py needs to run the VS Code
# extension inside a real VS Code: code-server 4.100.3 (VS Code 1.100.3, the
# newest that runs on Node 20), Debian's Chromium to load its workbench
# headless, and vsce to package extensions.  Everything but the two Debian
# packages goes under $MARGIN_E2E_DIR (default .e2e/, ignored by git).
# Idempotent; about a minute the first time.  Works without GitHub access:
#   - npm 10 is used, since npm 11's allowScripts blocks code-server's
#     nested native builds;
#   - @vscode/ripgrep's download from GitHub is served from a cache seeded
#     with Debian's ripgrep;
#   - argon2 falls back to building from source (hence libkrb5-dev for kerberos).
set -euo pipefail
cd "$(dirname "$0")/../.."
E2E="${MARGIN_E2E_DIR:-$PWD/.e2e}"
mkdir -p "$E2E/tmp"
E2E="$(cd "$E2E" && pwd)"

if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  apt-get install -y --no-install-recommends chromium libkrb5-dev >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium libkrb5-dev >/dev/null; }
fi

ripgrep_cache="$E2E/tmp/vscode-ripgrep-cache-1.15.11"
if [ ! -f "$ripgrep_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" ]; then
  mkdir -p "$ripgrep_cache" "$E2E/ripgrep"
  (cd "$E2E/ripgrep" && apt-get download ripgrep >/dev/null 2>&1 && dpkg-deb -x ripgrep_*.deb unpacked)
  tar -C "$E2E/ripgrep/unpacked/usr/bin" -czf "$ripgrep_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
fi

install_into() {  # folder, packages...
  local folder="$1"
  shift
  mkdir -p "$folder"
  [ -f "$folder/package.json" ] || echo '{"name": "margin-e2e-tools", "version": "1.0.0", "private": true}' >"$folder/package.json"
  if ! (cd "$folder" && PATH="$E2E/npm10/node_modules/.bin:$PATH" TMPDIR="$E2E/tmp" npm_config_yes=true \
    npm_config_unsafe_perm=true npm install --foreground-scripts --no-audit --no-fund --loglevel=error "$@" \
    >"$folder/install.log" 2>&1); then
    tail -40 "$folder/install.log" >&2
    return 1
  fi
}

[ -x "$E2E/npm10/node_modules/.bin/npm" ] || install_into "$E2E/npm10" npm@10.9.2
[ -x "$E2E/code-server/node_modules/.bin/code-server" ] || install_into "$E2E/code-server" code-server@4.100.3
[ -x "$E2E/vsce/node_modules/.bin/vsce" ] || install_into "$E2E/vsce" --ignore-scripts @vscode/vsce@3.9.2  # keytar (optional) needs libsecret

# The VS Code client's own packages go into npm's cache here, so that the tests
# (tests/editors/test_vscode*.py) install them with --offline: no network in the test run.
client="$E2E/client-packages"
rm -rf "$client" && mkdir -p "$client" && cp "$(dirname "$0")/../../editors/vscode/package.json" "$client/"
(cd "$client" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null 2>&1) \
  || echo "the VS Code client's packages could not be cached: the client tests will be skipped" >&2

XDG_CONFIG_HOME="$E2E/xdg-config" XDG_DATA_HOME="$E2E/xdg-data" "$E2E/code-server/node_modules/.bin/code-server" --version >/dev/null
echo "VS Code end-to-end tools ready in $E2E"
