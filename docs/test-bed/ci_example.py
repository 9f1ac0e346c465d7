"""Herald's test-bed API from Python, as a CI job uses it (docs/test-bed-api.md).

Waits for `herald up`, clears the delivery log and the device's notifications, pushes to the demo app with aioapns
(unmodified but for host and CA), and asks the gateway to answer once the push is delivered, then the device to answer
once the app's notification is in Notification Center: no sleep, no polling loop of the test's own. Then the same
through the other doors: firebase-admin (FCM's API) and pywebpush (the demo web app's subscription). Every answer is
checked against the API's OpenAPI document.

    HERALD_API=http://127.0.0.1:<console port> HERALD_TOKEN=<operator token> python3 docs/test-bed/ci_example.py

Needs requests, aioapns, firebase-admin, pywebpush and jsonschema from PyPI. Exits non-zero, saying why, on the first thing that is not as
expected.
"""
import asyncio
import json
import os
import ssl
import sys
import threading
import time

import jsonschema
import requests
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol

API = os.environ["HERALD_API"].rstrip("/")
AUTH = {"Authorization": f"Bearer {os.environ['HERALD_TOKEN']}"}
DOCUMENT = None


def check(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")


def conforms(answer, schema):
    """The answer's JSON, checked against a schema of the API's OpenAPI document."""
    body = answer.json()
    jsonschema.validate(body, {"$ref": f"#/components/schemas/{schema}", "components": DOCUMENT["components"]},
                        cls=jsonschema.Draft202012Validator)
    return body


def call(method, path, headers=AUTH, **params):
    return requests.request(method, API + path, headers=headers, params=params, timeout=75)


def ready_status():
    """Waits (at most 60 s) for herald up to listen and say it is ready."""
    deadline = time.monotonic() + 60
    while True:
        try:
            answer = call("GET", "/api/v1/status")
            if answer.status_code == 200 and answer.json()["ready"]:
                return conforms(answer, "Status")
        except requests.ConnectionError:
            pass
        check(time.monotonic() < deadline, "herald up was not ready within 60 s")
        time.sleep(0.2)


async def push_with_aioapns(status, token, message):
    apns = status["apns"]
    host_port = apns["url"].removeprefix("https://")
    APNsDevelopmentClientProtocol.APNS_SERVER, port = host_port.split(":")
    APNsDevelopmentClientProtocol.APNS_PORT = int(port)
    with open(apns["keyFile"]) as f:
        key = f.read()
    client = APNs(key=key, key_id=apns["keyID"], team_id=apns["teamID"], topic=status["demoApp"]["bundleID"],
                  use_sandbox=True, ssl_context=ssl.create_default_context(cafile=apns["certificateAuthority"]))
    request = NotificationRequest(device_token=token, message=message, push_type=PushType.ALERT, collapse_key="ci")
    result = await asyncio.wait_for(client.send_notification(request), timeout=30)
    check(result.is_successful, f"aioapns: {result.status} {result.description}")


def read_stream(token, last_event_id, events, opened):
    """Reads the event stream for `token` until a `delivered` event; `opened` is set once the server answered."""
    headers = dict(AUTH)
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    with requests.get(API + "/api/v1/events", headers=headers, params={"token": token}, stream=True,
                      timeout=75) as answer:
        # (The body is read only on failure: a stream's never ends.)
        if answer.status_code != 200:
            events.append({"error": answer.status_code, "body": answer.text})
            opened.set()
            return
        event = {}
        for line in answer.iter_lines(decode_unicode=True):
            opened.set()
            if line.startswith("id: "):
                event["id"] = int(line[4:])
            elif line.startswith("event: "):
                event["event"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = json.loads(line[6:])
            elif line == "" and "event" in event:
                events.append(event)
                if event["event"] == "delivered":
                    return
                event = {}


def main():
    global DOCUMENT
    DOCUMENT = call("GET", "/api/v1/openapi.json", headers={}).json()
    status = ready_status()
    token = status["demoApp"]["deviceToken"]
    check(token, f"the demo app has a device token: {status}")
    print("ready", status["demoApp"]["bundleID"])

    # A clean log, and a clean Notification Center, for this test.
    deleted = conforms(call("DELETE", "/api/v1/deliveries"), "Deleted")
    cleared = conforms(call("DELETE", "/api/v1/notifications"), "Deleted")
    print("cleared", deleted["deleted"] >= 0 and cleared["deleted"] >= 0)
    listing = conforms(call("GET", "/api/v1/deliveries", token=token), "DeliveryListing")
    check(listing == {"deliveries": [], "complete": True}, f"an empty log: {listing}")

    # "Expect none": a short wait that runs out says complete: false.
    none = conforms(call("GET", "/api/v1/deliveries", token=token, wait=1), "DeliveryListing")
    check(none == {"deliveries": [], "complete": False}, f"nothing came: {none}")
    print("none yet")

    # Wait on the server for the push to be delivered, while it is sent.
    answers = {}

    def wait_for_delivery():
        answer = call("GET", "/api/v1/deliveries", token=token, state="Delivered to Device", wait=30)
        answers["at"] = time.monotonic()
        answers["answer"] = answer

    waiter = threading.Thread(target=wait_for_delivery)
    waiter.start()
    # And watch the log as it is written: Server-Sent Events, open before the push.
    streamed, stream_open = [], threading.Event()
    watcher = threading.Thread(target=read_stream, args=(token, None, streamed, stream_open))
    watcher.start()
    check(stream_open.wait(timeout=30), "the event stream opened")
    asyncio.run(push_with_aioapns(status, token, {"aps": {"alert": {"title": "CI", "body": "from Python"}}, "order": 42}))
    sent_at = time.monotonic()
    waiter.join(timeout=40)
    check("answer" in answers, "the wait answered")
    listing = conforms(answers["answer"], "DeliveryListing")
    check(listing["complete"] and len(listing["deliveries"]) == 1, f"one delivery: {listing}")
    delivery = listing["deliveries"][0]
    check(delivery["door"] == "apns" and delivery["pushType"] == "alert" and delivery["collapseID"] == "ci",
          f"sent as: {delivery}")
    check(delivery["payload"]["order"] == 42 and delivery["payload"]["aps"]["alert"]["title"] == "CI",
          f"its payload: {delivery['payload']}")
    check(delivery["state"] == "Delivered to Device", f"its state: {delivery['state']}")
    check([event["kind"] for event in delivery["events"]] == ["received", "delivered"], f"{delivery['events']}")
    print("delivered", delivery["payload"]["order"], f"answered {max(0.0, answers['at'] - sent_at) * 1000:.0f} ms after the 200")
    watcher.join(timeout=40)
    check([e["event"] for e in streamed] == ["received", "delivered"], f"the stream: {streamed}")
    for event in streamed:
        jsonschema.validate(event["data"], {"$ref": "#/components/schemas/StreamEvent", "components": DOCUMENT["components"]},
                            cls=jsonschema.Draft202012Validator)
        check(event["data"]["uniqueID"] == delivery["uniqueID"] and event["data"]["sequence"] == event["id"], f"{event}")
    # A client that lost its connection resumes after the last event it got (Last-Event-ID): the rest, not again.
    resumed = []
    read_stream(token, streamed[0]["id"], resumed, threading.Event())
    check([e["id"] for e in resumed] == [streamed[1]["id"]], f"resumed: {resumed}")
    print("streamed", " ".join(e["event"] for e in streamed))

    # What the device did: the app's notification, as its UNUserNotificationCenter lists it (the request's identifier
    # is the apns-collapse-id).
    bundle = status["demoApp"]["bundleID"]
    shown = conforms(call("GET", "/api/v1/notifications", bundle=bundle, identifier="ci", wait=30), "NotificationListing")
    check(shown["complete"] and len(shown["notifications"]) == 1, f"one notification: {shown}")
    note = shown["notifications"][0]
    check(note["state"] == "delivered" and note["title"] == "CI" and note["body"] == "from Python"
          and note["userInfo"]["order"] == 42 and note["date"], f"as the app lists it: {note}")
    # Shown to the person as a banner: no Focus holds it, the demo app's alerts are on.
    check(note["presented"] is True and note["presentation"] == "banner", f"presented: {note}")
    # The demo app runs no Live Activity.
    activities = conforms(call("GET", "/api/v1/activities", bundle=bundle), "ActivityListing")
    check(activities == {"activities": [], "complete": True}, f"no Live Activities: {activities}")
    print("shown", note["title"], note["userInfo"]["order"])

    one = conforms(call("GET", f"/api/v1/deliveries/{delivery['uniqueID']}"), "Delivery")
    check(one == delivery, "the same delivery by its unique ID")
    later = conforms(call("GET", "/api/v1/deliveries", since=delivery["uniqueID"]), "DeliveryListing")
    check(later["deliveries"] == [], f"nothing after it: {later}")

    # Mistakes are JSON, naming what is wrong.
    for params, parameter in [({"wait": 61}, "wait"), ({"min": 0}, "min"), ({"bogus": 1}, "bogus"),
                              ({"door": "smtp"}, "door"), ({"since": "yesterday"}, "since")]:
        answer = call("GET", "/api/v1/deliveries", **params)
        body = conforms(answer, "Error")
        check(answer.status_code == 400 and body["parameter"] == parameter, f"{params}: {answer.status_code} {body}")
    missing = call("GET", "/api/v1/deliveries/no-such-id")
    check(missing.status_code == 404 and conforms(missing, "Error")["parameter"] == "uniqueID", missing.text)
    for params, code, parameter in [({"bundle": "com.example.none"}, 404, "bundle"), ({"state": "read"}, 400, "state"),
                                    ({"wait": -1}, 400, "wait")]:
        answer = call("GET", "/api/v1/notifications", **params)
        body = conforms(answer, "Error")
        check(answer.status_code == code and body["parameter"] == parameter, f"{params}: {answer.status_code} {body}")
    answer = call("GET", "/api/v1/activities", activityState="over")
    check(answer.status_code == 400 and conforms(answer, "Error")["parameter"] == "activityState", answer.text)
    for headers in [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}]:
        refused = call("GET", "/api/v1/deliveries", headers=headers)
        check(refused.status_code == 401 and conforms(refused, "Error")["parameter"] == "Authorization", refused.text)
    print("mistakes named")

    removed = conforms(call("DELETE", "/api/v1/deliveries", token=token), "Deleted")
    check(removed == {"deleted": 1}, f"removed: {removed}")
    removed = conforms(call("DELETE", "/api/v1/notifications", bundle=bundle), "Deleted")
    check(removed == {"deleted": 1}, f"removed from Notification Center: {removed}")
    left = conforms(call("GET", "/api/v1/notifications", bundle=bundle), "NotificationListing")
    check(left == {"notifications": [], "complete": True}, f"none left: {left}")

    # The other doors: FCM's API with firebase-admin, Web Push with pywebpush; each found by its door.
    send_with_firebase_admin(status)
    fcm = conforms(call("GET", "/api/v1/deliveries", door="fcm", wait=30), "DeliveryListing")
    check(fcm["complete"] and len(fcm["deliveries"]) == 1, f"one FCM delivery: {fcm}")
    sent = fcm["deliveries"][0]
    check(sent["token"] == token and sent["payload"]["aps"]["alert"]["title"] == "FCM"
          and sent["payload"]["order"] == "9" and sent["fcmMessage"].startswith("projects/" + status["fcm"]["project"]),
          f"sent as: {sent}")
    shown = conforms(call("GET", "/api/v1/notifications", bundle=bundle, wait=30), "NotificationListing")
    check([n["title"] for n in shown["notifications"]] == ["FCM"], f"the FCM message shown: {shown}")
    print("fcm", sent["payload"]["order"])
    send_with_pywebpush(status)
    web = conforms(call("GET", "/api/v1/deliveries", door="webpush", wait=30), "DeliveryListing")
    check(web["complete"] and len(web["deliveries"]) == 1 and web["deliveries"][0]["payload"] is None, f"{web}")
    print("webpush", web["deliveries"][0]["pushType"])
    # What the device did with it: a web push message is not in an app's notification list but in app-pushes.
    handed = conforms(call("GET", "/api/v1/app-pushes", kind="webpush", state="shown", wait=30), "AppPushListing")
    check(handed["complete"] and len(handed["appPushes"]) == 1, f"one web push shown: {handed}")
    message = handed["appPushes"][0]
    check(message["uniqueID"] == web["deliveries"][0]["uniqueID"] and message["origin"] == status["webPush"]["origin"],
          f"the web push shown: {message}")
    print("webpush shown", message["data"]["notification"]["title"])
    print("ok")


def send_with_firebase_admin(status):
    """Sends through FCM's HTTP v1 API as firebase-admin does, through herald up's proxy for Google's hosts."""
    fcm = status["fcm"]
    os.environ.update(HTTPS_PROXY=fcm["proxy"], REQUESTS_CA_BUNDLE=status["apns"]["certificateAuthority"],
                      GOOGLE_APPLICATION_CREDENTIALS=fcm["credentials"])
    import firebase_admin
    from firebase_admin import messaging
    app = firebase_admin.initialize_app(name="ci")
    try:
        messaging.send(messaging.Message(token=fcm["token"], notification=messaging.Notification(title="FCM"),
                                         data={"order": "9"}), app=app)
    finally:
        firebase_admin.delete_app(app)
        for name in ("HTTPS_PROXY", "REQUESTS_CA_BUNDLE", "GOOGLE_APPLICATION_CREDENTIALS"):
            del os.environ[name]


def send_with_pywebpush(status):
    """Sends a Declarative Web Push message to the demo web app's subscription, as pywebpush does."""
    from pywebpush import webpush
    web = status["webPush"]
    with open(web["subscriptionFile"]) as f:
        subscription = json.load(f)
    os.environ["REQUESTS_CA_BUNDLE"] = status["apns"]["certificateAuthority"]
    try:
        message = {"web_push": 8030, "notification": {"title": "Web", "navigate": web["origin"] + "/"}}
        answer = webpush(subscription, data=json.dumps(message), vapid_private_key=web["vapidKeyFile"],
                         vapid_claims={"sub": "mailto:ci@example.com"}, ttl=60)
        check(answer.status_code == 201, f"pywebpush: {answer.status_code} {answer.text}")
    finally:
        del os.environ["REQUESTS_CA_BUNDLE"]


main()
