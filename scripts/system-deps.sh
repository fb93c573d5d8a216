#!/usr/bin/env bash
# Installs the system tools filed documents use, when they are missing: Poppler's `pdftoppm` and
# `pdftotext` (poppler-utils) and Tesseract with English (tesseract-ocr). mdvault runs without
# them (scans are then reported as `needs_ocr`), but the test suite checks OCR, so
# scripts/test.sh calls this. The test suite also drives the web page in Debian's headless
# Chromium with its driver (chromium, chromium-driver; scripts/browser-test.sh); a server
# needs neither, so `--optional` (start.sh) skips them. Uses apt-get (with sudo when not root); elsewhere it says what to
# install. With --optional a failure is a warning, not an error (scripts/start.sh).
set -euo pipefail

optional=false
[ "${1:-}" = "--optional" ] && optional=true

missing=()
command -v pdftoppm >/dev/null && command -v pdftotext >/dev/null || missing+=(poppler-utils)
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
if ! $optional; then
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

fail() {
  if $optional; then
    echo "warning: $1; scanned PDFs will be reported as needs_ocr" >&2
    exit 0
  fi
  echo "error: $1" >&2
  exit 1
}

if ! command -v apt-get >/dev/null; then
  fail "install ${missing[*]} (PDF rendering and OCR) with your package manager"
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || fail "run as root, or install ${missing[*]} yourself"
  sudo=sudo
fi
echo "== installing ${missing[*]}"
$sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" \
  || fail "apt-get could not install ${missing[*]}"
