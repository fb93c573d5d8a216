#!/usr/bin/env bash
# Waits until a test server's first index build is done: /readyz answers 200 (503 while it
# builds). The one wait every test script that starts `mdvault serve` uses.
#
#   scripts/wait-ready.sh NAME BASE KEY PID LOG [SECONDS]
#
# NAME prefixes the messages (the calling script's name), BASE is the server's URL, KEY its
# API key, PID its process and LOG its log file; SECONDS (default 300) bounds the wait. Exits
# 0 once ready; 2 with the log's last 50 lines when the server exited first or the time ran
# out, naming the last status seen.
set -euo pipefail
name="$1" base="$2" key="$3" pid="$4" log="$5" seconds="${6:-300}"
code=none
deadline=$((SECONDS + seconds))
while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "$name: the server exited before it was ready; its log:" >&2
        tail -n 50 "$log" >&2
        exit 2
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$base/readyz" || true)"
    if [[ "$code" == 200 ]]; then exit 0; fi
    sleep 0.5
done
echo "$name: /readyz was not 200 within $seconds s (last status $code); the server's log:" >&2
tail -n 50 "$log" >&2
exit 2
