#!/usr/bin/env bash
# Installs what the screenshot tests need; optional, since screenshots are made
# by hand when asked, not in every CI run:
#   bash tests/editors/screenshot_setup.sh
#   MARGIN_SCREENSHOTS=docs/images .venv/bin/python -m pytest tests/editors -k screenshot
#   - VS Code (tests/editors/test_vscode_real.py): code-server, Chromium and vsce,
#     from vscode_e2e_setup.sh;
#   - Neovim (tests/editors/test_neovim.py; nvim itself comes with the test extras):
#     tmux, the terminal it runs in, and DejaVu Sans Mono, the font Chromium draws
#     the terminal's cells with (also VS Code's monospace font on Linux).
# Without them the screenshot tests are skipped with the reason.  Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash tests/editors/vscode_e2e_setup.sh

packages=()
command -v tmux >/dev/null || packages+=(tmux)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || packages+=(fonts-dejavu-core)
command -v fc-list >/dev/null || packages+=(fontconfig)
if [ ${#packages[@]} -gt 0 ]; then
  apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null; }
fi
echo "screenshot tools ready (tmux $(tmux -V | cut -d' ' -f2), $(chromium --version 2>/dev/null | head -1))"
