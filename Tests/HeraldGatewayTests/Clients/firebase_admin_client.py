"""firebase-admin (PyPI, unmodified) against Herald's FCM port, through its HTTPS proxy.

The environment carries what a user sets: HTTPS_PROXY (Herald's FCM port), REQUESTS_CA_BUNDLE (Herald's CA) and
GOOGLE_APPLICATION_CREDENTIALS (the project's service-account file). Prints one JSON line per step:
{"step": …, "result": …} or {"step": …, "error": "<exception class>", "message": …}.

Usage: firebase_admin_client.py TOKEN LIVE_ACTIVITY_TOKEN FOREIGN_TOKEN OTHER_CREDENTIALS OTHER_TOKEN QUOTA_TOKEN QUOTA
"""

import json
import sys
import time
import warnings

import firebase_admin
from firebase_admin import credentials, messaging

token, activity_token, foreign_token, other_credentials, other_token, quota_token, quota = sys.argv[1:8]
app = firebase_admin.initialize_app()
other_app = firebase_admin.initialize_app(credentials.Certificate(other_credentials), name="other")


def step(name, call):
    try:
        result = call()
    except Exception as error:  # the SDK's own exception class is what the test checks
        print(json.dumps({"step": name, "error": type(error).__name__, "message": str(error)}), flush=True)
        return
    print(json.dumps({"step": name, "result": result}), flush=True)


def alert(title, **kwargs):
    return messaging.Message(token=token, notification=messaging.Notification(title=title, body="firebase-admin"), **kwargs)


step("send", lambda: messaging.send(alert("admin-send")))
step("dry_run", lambda: messaging.send(alert("admin-dry"), dry_run=True))


def send_each():
    response = messaging.send_each([alert("admin-each-1"), alert("admin-each-2")])
    return {"success": response.success_count, "failure": response.failure_count}


step("send_each", send_each)


def subscribe():
    first = messaging.subscribe_to_topic([token], "news")
    again = messaging.subscribe_to_topic([token], "news")
    return [first.success_count, again.success_count, [e.reason for e in again.errors]]


step("subscribe", subscribe)
step("topic", lambda: messaging.send(messaging.Message(topic="news", notification=messaging.Notification(title="admin-topic"))))
step(
    "condition",
    lambda: messaging.send(
        messaging.Message(
            condition="'news' in topics && !('sport' in topics)",
            notification=messaging.Notification(title="admin-condition"),
        )
    ),
)
step("unsubscribe", lambda: messaging.unsubscribe_from_topic([token], "news").success_count)


def legacy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        response = messaging.subscribe_to_topic_legacy([token, "not-a-token"], "weather")
    return [response.success_count, [e.reason for e in response.errors]]


step("legacy", legacy)
step(
    "background",
    lambda: messaging.send(
        messaging.Message(
            token=token,
            data={"sync": "now"},
            apns=messaging.APNSConfig(
                headers={"apns-priority": "5"},
                payload=messaging.APNSPayload(aps=messaging.Aps(content_available=True)),
            ),
        )
    ),
)
step(
    "live_activity",
    lambda: messaging.send(
        messaging.Message(
            token=token,
            apns=messaging.APNSConfig(
                live_activity_token=activity_token,
                payload=messaging.APNSPayload(
                    aps=messaging.Aps(
                        custom_data={"event": "update", "timestamp": int(time.time()), "content-state": {"score": 3}}
                    )
                ),
            ),
        )
    ),
)
step("unregistered", lambda: messaging.send(messaging.Message(token=token[:23] + "A" * 140)))
step("invalid_argument", lambda: messaging.send(messaging.Message(token="not-a-token")))
step("sender_id_mismatch", lambda: messaging.send(messaging.Message(token=foreign_token)))
step(
    "third_party_auth",
    lambda: messaging.send(
        messaging.Message(token=other_token, notification=messaging.Notification(title="x")), app=other_app
    ),
)


def exhaust_quota():
    for _ in range(int(quota)):
        messaging.send(messaging.Message(token=quota_token, data={"n": "1"}))
    return messaging.send(messaging.Message(token=quota_token, data={"n": "1"}))


step("quota_exceeded", exhaust_quota)
