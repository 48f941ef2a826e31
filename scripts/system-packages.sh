#!/usr/bin/env bash
# Install the Debian packages the test suite and the batteries' default adapters need
# beyond Python:
#   chromium, chromium-driver  the admin test that drives a real browser (tests/admin/)
#   zsh, fish                  completion scripts run for real (tests/cli/test_completion.py)
#   ffmpeg                     media: video probe (ffprobe), posters and renditions
#   libpango + fonts           document `local`: WeasyPrint's text layout
#   poppler-utils              document: PDF pages to PNG (pdftoppm)
#   texlive-latex-base         document `latex`: pdflatex
#   bubblewrap                 document `latex`: the sandbox around pdflatex
#   wrk                        bench/served.py: HTTP load on `toolkit serve`
# Idempotent: installs only what is missing. Uses sudo only when not running as root.
set -euo pipefail

# program-on-PATH -> Debian package
declare -A wanted=(
    [chromium]=chromium
    [chromedriver]=chromium-driver
    [zsh]=zsh
    [fish]=fish
    [ffmpeg]=ffmpeg
    [ffprobe]=ffmpeg
    [pdftoppm]=poppler-utils
    [pdflatex]=texlive-latex-base
    [bwrap]=bubblewrap
    [wrk]=wrk
)
missing=()
for program in "${!wanted[@]}"; do
    command -v "$program" >/dev/null || missing+=("${wanted[$program]}")
done
# Libraries and fonts have no program to look for.
for package in libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" \
        || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
fi

"${as_root[@]}" apt-get update
# shellcheck disable=SC2046  # one word per package, de-duplicated
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    $(printf '%s\n' "${missing[@]}" | sort -u)
