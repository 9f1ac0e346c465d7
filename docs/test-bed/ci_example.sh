#!/bin/sh
# Herald's test-bed API from a shell, with curl and jq, as a CI job uses it (docs/test-bed-api.md).
#
#   export HERALD_OPERATOR_TOKEN=$(openssl rand -hex 16)
#   herald up &
#   sh docs/test-bed/ci_example.sh
#
# Waits for herald up on the server's side, clears the delivery log and the device's notifications, expects no push,
# then waits on the server for the push `herald push` sends, checks what it was sent as and how the app lists it. HERALD_API is the console's URL (http://127.0.0.1:2200 by
# default), HERALD the herald command (herald on PATH by default). Exits non-zero, saying why, on the first thing that
# is not as expected.
set -eu

api="${HERALD_API:-http://127.0.0.1:2200}/api/v1"
auth="Authorization: Bearer ${HERALD_OPERATOR_TOKEN:?the operator token herald up was started with}"
herald="${HERALD:-herald}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAILED: $*" >&2
    exit 1
}

# herald up listening (curl retries while the port refuses), then ready: the server answers once it is, at most 60 s.
status=$(curl -sS --retry 60 --retry-delay 1 --retry-connrefused -H "$auth" "$api/status?wait=60")
echo "$status" | jq -e '.ready' >/dev/null || fail "herald up is not ready: $status"
bundle=$(echo "$status" | jq -r '.demoApp.bundleID')
token=$(echo "$status" | jq -r '.demoApp.deviceToken')
echo "ready $bundle"

# A clean log, and a clean Notification Center, for this test.
curl -sSf -X DELETE -H "$auth" "$api/deliveries" | jq -e '.deleted >= 0' >/dev/null
curl -sSf -X DELETE -H "$auth" "$api/notifications" | jq -e '.deleted >= 0' >/dev/null

# "Expect none": a wait that runs out says complete: false.
none=$(curl -sSf -H "$auth" "$api/deliveries?token=$token&wait=1" | jq -c .)
[ "$none" = '{"deliveries":[],"complete":false}' ] || fail "expected no delivery: $none"
echo "none yet"

# Watch as it happens: the event stream of the app's pushes and of what its device shows. Its first line (retry:) comes
# once the stream has noted what the device shows now, so everything after it is sent.
curl -sSN -H "$auth" "$api/events?topic=$bundle" >"$work/events" &
streamer=$!
for _ in $(seq 100); do grep -q '^retry:' "$work/events" 2>/dev/null && break; sleep 0.1; done

# Wait on the server for the push to reach the device, while herald push sends it.
curl -sSf -H "$auth" "$api/deliveries?token=$token&state=Delivered%20to%20Device&wait=30" >"$work/answer" &
waiter=$!
echo '{"order": 3}' >"$work/payload.json"
"$herald" push --gateway "$(echo "$status" | jq -r '.apns.url')" --cacert "$(echo "$status" | jq -r '.apns.certificateAuthority')" \
    --p8 "$(echo "$status" | jq -r '.apns.keyFile')" --key-id "$(echo "$status" | jq -r '.apns.keyID')" \
    --team-id "$(echo "$status" | jq -r '.apns.teamID')" --topic "$bundle" --token "$token" \
    --title CI --body 'from curl' --payload "$work/payload.json" >/dev/null || fail "herald push failed"
wait "$waiter" || fail "the wait failed"
jq -e '.complete and (.deliveries | length) == 1
    and .deliveries[0].payload.order == 3 and .deliveries[0].payload.aps.alert.title == "CI"
    and .deliveries[0].state == "Delivered to Device"' "$work/answer" >/dev/null || fail "not delivered as sent: $(cat "$work/answer")"
echo "delivered $(jq '.deliveries[0].payload.order' "$work/answer")"

# What the device did: the app's notification in Notification Center, as its UNUserNotificationCenter lists it.
curl -sSf -H "$auth" "$api/notifications?bundle=$bundle&wait=30" >"$work/shown"
jq -e '.complete and (.notifications | length) == 1 and .notifications[0].title == "CI"
    and .notifications[0].body == "from curl" and .notifications[0].userInfo.order == 3' "$work/shown" >/dev/null ||
    fail "not shown as sent: $(cat "$work/shown")"
echo "shown $(jq -r '.notifications[0].title' "$work/shown")"
kill "$streamer"
grep -q '^event: delivered' "$work/events" || fail "no delivered event in the stream: $(cat "$work/events")"
grep '^data: ' "$work/events" | sed 's/^data: //' | jq -se 'map(select(.title == "CI" and .state == "delivered")) | length >= 1' \
    >/dev/null || fail "the stream did not show the notification: $(cat "$work/events")"
echo "streamed delivered notification"

# The CLI says the same, for a script on herald up's machine: --json prints what the API answers.
data=$(echo "$status" | jq -r '.dataDirectory')
"$herald" deliveries list --data-dir "$data" --token "$token" --json >"$work/cli" || fail "herald deliveries list failed"
same='[.deliveries[] | {uniqueID, apnsID, token, topic, payload, receivedAt}]'
[ "$(jq -c "$same" "$work/cli")" = "$(jq -c "$same" "$work/answer")" ] ||
    fail "herald deliveries list differs from the API: $(cat "$work/cli")"
"$herald" notifications list --data-dir "$data" "$bundle" --json >"$work/cli" || fail "herald notifications list failed"
[ "$(jq -c '.notifications' "$work/cli")" = "$(jq -c '.notifications' "$work/shown")" ] ||
    fail "herald notifications list differs from the API: $(cat "$work/cli")"
echo "cli agrees"

# A local notification the app schedules (here herald's CLI, in herald up's data directory) is pending until it fires.
"$herald" notifications send --data-dir "$(echo "$status" | jq -r '.dataDirectory')" "$bundle" --identifier later --title Later --in 3600 >/dev/null || fail "notifications send failed"
curl -sSf -H "$auth" "$api/notifications?bundle=$bundle&state=pending&identifier=later" >"$work/pending"
jq -e '.notifications[0].trigger == "timeInterval" and .notifications[0].title == "Later"' "$work/pending" >/dev/null ||
    fail "not pending: $(cat "$work/pending")"
echo "pending later"

# A mistake is a 400 whose JSON names the parameter.
code=$(curl -sS -o "$work/error" -w '%{http_code}' -H "$auth" "$api/deliveries?wait=61")
[ "$code" = 400 ] && jq -e '.parameter == "wait"' "$work/error" >/dev/null || fail "wait=61: $code $(cat "$work/error")"

# Reset: remove this test's deliveries.
curl -sSf -X DELETE -H "$auth" "$api/deliveries?token=$token" | jq -e '.deleted == 1' >/dev/null || fail "not removed"
curl -sSf -X DELETE -H "$auth" "$api/notifications?bundle=$bundle" | jq -e '.deleted == 1' >/dev/null || fail "not removed"
curl -sSf -X DELETE -H "$auth" "$api/notifications?bundle=$bundle&state=pending" | jq -e '.deleted == 1' >/dev/null ||
    fail "the pending one not removed"
echo "ok"
