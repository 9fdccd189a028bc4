#!/usr/bin/env bash
# Render a result workbook with LibreOffice (headless): OUT.xlsx -> OUT.pdf -> OUT-<page>.png.
#
# Usage: tools/render_workbook.sh OUT.xlsx [PAGES] [DPI]
#   PAGES  how many leading PDF pages to turn into PNG (default 1)
#   DPI    PNG resolution (default 60, small enough for docs/)
# Needs: soffice (apt-get install libreoffice-calc) and pdftoppm (apt-get install poppler-utils).
# Writes next to the workbook; prints the files it wrote. Exit 2 on bad usage, 1 when a tool fails.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 || "$1" == "-h" || "$1" == "--help" ]]; then
    echo "usage: $0 OUT.xlsx [PAGES] [DPI]" >&2
    exit 2
fi
xlsx=$1
pages=${2:-1}
dpi=${3:-60}
if [[ ! -f "$xlsx" ]]; then
    echo "error: $xlsx: no such file" >&2
    exit 2
fi
for tool in soffice pdftoppm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool not found (apt-get install libreoffice-calc poppler-utils)" >&2
        exit 1
    fi
done

dir=$(cd "$(dirname "$xlsx")" && pwd)
stem=$(basename "${xlsx%.*}")
# A private profile directory: no clash with a running LibreOffice, nothing left in $HOME.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

soffice --headless --norestore "-env:UserInstallation=file://$profile" \
    --convert-to pdf --outdir "$dir" "$xlsx" >/dev/null 2>&1 || true
pdf="$dir/$stem.pdf"
if [[ ! -s "$pdf" ]]; then
    echo "error: LibreOffice did not produce $pdf" >&2
    exit 1
fi
echo "$pdf"
pdftoppm -png -r "$dpi" -f 1 -l "$pages" "$pdf" "$dir/$stem"
ls -1 "$dir/$stem"-*.png
