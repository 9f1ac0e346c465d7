#!/usr/bin/env bash
# Apple's documented token-based curl recipe ("Sending push notifications using command-line tools"),
# unchanged except for the host and --cacert. Prints curl's status line and body.
# Usage: apple-curl-recipe.sh HOST:PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC DEVICE_TOKEN [extra curl args…]
set -euo pipefail
APNS_HOST_NAME=$1; CA_FILE=$2; TOKEN_KEY_FILE_NAME=$3; AUTH_KEY_ID=$4; TEAM_ID=$5; TOPIC=$6; DEVICE_TOKEN=$7
shift 7
JWT_ISSUE_TIME=$(date +%s)
JWT_HEADER=$(printf '{ "alg": "ES256", "kid": "%s" }' "${AUTH_KEY_ID}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_CLAIMS=$(printf '{ "iss": "%s", "iat": %d }' "${TEAM_ID}" "${JWT_ISSUE_TIME}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_HEADER_CLAIMS="${JWT_HEADER}.${JWT_CLAIMS}"
JWT_SIGNED_HEADER_CLAIMS=$(printf "${JWT_HEADER_CLAIMS}" | openssl dgst -binary -sha256 -sign "${TOKEN_KEY_FILE_NAME}" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
AUTHENTICATION_TOKEN="${JWT_HEADER}.${JWT_HEADER_CLAIMS#*.}.${JWT_SIGNED_HEADER_CLAIMS}"
curl --silent --show-error --max-time 20 --cacert "${CA_FILE}" \
  --header "apns-topic: $TOPIC" --header "apns-push-type: alert" \
  --header "authorization: bearer $AUTHENTICATION_TOKEN" \
  --data '{"aps":{"alert":"test"}}' --http2 \
  --write-out '\nstatus=%{http_code} http=%{http_version}\n' --dump-header - \
  "$@" "https://${APNS_HOST_NAME}/3/device/${DEVICE_TOKEN}"
