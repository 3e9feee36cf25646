#!/bin/sh
# Writes the text reader's fixtures (see README) from letter.ps and
# letter.html with the producers installed here: Ghostscript (Debian
# ghostscript), headless Chromium (chromium), cairo through poppler's
# pdftocairo (poppler-utils) and qpdf.
set -eu
cd "$(dirname "$0")"
gs -q -dNOPAUSE -dBATCH -dSAFER -sDEVICE=pdfwrite -sOutputFile=gs.pdf letter.ps
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$profile" --no-pdf-header-footer \
  --print-to-pdf=chromium.pdf letter.html 2>/dev/null
rm -rf "$profile"
pdftocairo -pdf chromium.pdf cairo.pdf
qpdf --rotate=+90:1 gs.pdf rotated.pdf
