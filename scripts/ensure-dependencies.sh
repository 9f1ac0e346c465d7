#!/usr/bin/env bash
# Installs the system packages Herald builds against, when they are missing (a fresh machine or CI).
# Sourced by scripts/test and scripts/herald.
set -euo pipefail

missing=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || missing+=(libsqlite3-dev)
# The gateway's interop tests drive it with real clients: curl (HTTP/2) with openssl (Apple's JWT recipe) and
# Python's aioapns.
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-pip)
# The test-bed API's examples are run as a CI job runs them: curl with jq, Node's fetch and http2.
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# The gateway's PostgreSQL store is tested against a real server: a throwaway cluster each test process makes.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
# The desktop presenter's test shows notifications on a real server: dunst on a virtual X display, on a session bus of
# its own, with a screenshot (ImageMagick) and D-Bus signals sent by gdbus.
if [ "${HERALD_SKIP_DESKTOP_TOOLS:-0}" != 1 ]; then
  command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
  command -v dunst >/dev/null 2>&1 || missing+=(dunst)
  command -v dbus-daemon >/dev/null 2>&1 || missing+=(dbus-daemon)
  command -v gdbus >/dev/null 2>&1 || missing+=(libglib2.0-bin)
  command -v import >/dev/null 2>&1 || missing+=(imagemagick)
  # UnifiedPush's test app: a connector in Debian's Python with its D-Bus and GLib bindings.
  /usr/bin/python3 -c "import dbus, gi" >/dev/null 2>&1 || missing+=(python3 python3-dbus python3-gi)
fi
# The console's browser test: headless Chromium and its WebDriver from Debian (Selenium drives them; nothing is
# downloaded at run time).
if [ "${HERALD_SKIP_BROWSER_TOOLS:-0}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  # Web push to a real browser: Firefox ESR with Herald as its push service, Herald's CA put in its profile by certutil.
  command -v firefox-esr >/dev/null 2>&1 || missing+=(firefox-esr)
  command -v certutil >/dev/null 2>&1 || missing+=(libnss3-tools)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing ${missing[*]} (Herald's build and its tests' real clients and desktop)…" >&2
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi

if [ "${HERALD_SKIP_PYTHON_CLIENTS:-0}" != 1 ] && ! python3 -c "import aioapns" >/dev/null 2>&1; then
  echo "Installing aioapns 4.0 from PyPI (the gateway's third-party client test)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check aioapns==4.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages aioapns==4.0
fi

if [ "${HERALD_SKIP_PYTHON_CLIENTS:-0}" != 1 ] && ! python3 -c "import firebase_admin" >/dev/null 2>&1; then
  echo "Installing firebase-admin 7.7 from PyPI (the FCM front door's third-party client test)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check firebase-admin==7.7.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages firebase-admin==7.7.0
fi

if [ "${HERALD_SKIP_PYTHON_CLIENTS:-0}" != 1 ] && ! python3 -c "import pywebpush" >/dev/null 2>&1; then
  echo "Installing pywebpush 2.5 from PyPI (Web Push's third-party client test)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check pywebpush==2.5.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages pywebpush==2.5.0
fi

if [ "${HERALD_SKIP_PYTHON_CLIENTS:-0}" != 1 ] \
  && ! python3 -c "import requests, jsonschema, openapi_spec_validator" >/dev/null 2>&1; then
  echo "Installing requests, jsonschema and openapi-spec-validator from PyPI (the test-bed API's Python example)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check requests==2.34.2 jsonschema==4.26.0 openapi-spec-validator==0.9.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages requests==2.34.2 jsonschema==4.26.0 \
      openapi-spec-validator==0.9.0
fi

if [ "${HERALD_SKIP_PYTHON_CLIENTS:-0}" != 1 ] && ! python3 -c "import httpx, h2" >/dev/null 2>&1; then
  echo "Installing httpx and h2 from PyPI (the fault rules' example reads APNs answers' headers over HTTP/2)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check "httpx[http2]==0.28.1" \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "httpx[http2]==0.28.1"
fi

if [ "${HERALD_SKIP_BROWSER_TOOLS:-0}" != 1 ] && ! python3 -c "import selenium" >/dev/null 2>&1; then
  echo "Installing Selenium from PyPI (the console's browser test)…" >&2
  python3 -m pip install --quiet --disable-pip-version-check "selenium>=4.20" \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "selenium>=4.20"
fi
