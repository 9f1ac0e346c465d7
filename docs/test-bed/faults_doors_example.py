"""Herald's fault rules on the FCM and web push doors: firebase-admin and pywebpush meet the errors Google's FCM and a
web push service send, and show what each client does with them.

Waits for `herald up`, removes every rule, then adds rules through the test-bed API (`/api/v1/faults`) and sends to the
demo app with firebase-admin (unmodified, through herald up's proxy for Google's hosts) and to the demo web app's
subscription with pywebpush:
- FCM: each `errorCode` raises firebase-admin's own exception class; `UNAVAILABLE` with `Retry-After` twice, and
  firebase-admin's own retries get the message through (the refused attempts logged with their rule); a quota of two
  per token answers the third `QUOTA_EXCEEDED` with `Retry-After`; a topic message refused; a late answer; a
  connection closed after the message was handled, which firebase-admin sends again: the device gets it twice.
- Web push: 429 with `Retry-After` then 201; 410, 413 and 503 as `WebPushException`s with the service's
  `{"reason"}`; a quota; a late answer; a close; a GOAWAY on this HTTP/1.1 door refused with the field named.
Every answer of the API is checked against its OpenAPI document.

    HERALD_API=http://127.0.0.1:<console port> HERALD_TOKEN=<operator token> python3 docs/test-bed/faults_doors_example.py

Needs requests, firebase-admin, pywebpush and jsonschema from PyPI. Exits non-zero, saying why, on the first thing that
is not as expected.
"""
import json
import os
import sys
import time

import jsonschema
import requests

API = os.environ["HERALD_API"].rstrip("/")
AUTH = {"Authorization": f"Bearer {os.environ['HERALD_TOKEN']}"}
DOCUMENT = None


def check(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")


def conforms(answer, schema):
    body = answer.json()
    jsonschema.validate(body, {"$ref": f"#/components/schemas/{schema}", "components": DOCUMENT["components"]},
                        cls=jsonschema.Draft202012Validator)
    return body


def call(method, path, json=None, **params):
    # The API is on loopback: never through the proxy firebase-admin is given.
    return requests.request(method, API + path, headers=AUTH, params=params, json=json, timeout=75,
                            proxies={"http": None, "https": None})


def add_rule(rule):
    answer = call("POST", "/api/v1/faults", json=rule)
    check(answer.status_code == 201, f"rule added: {answer.status_code} {answer.text}")
    return conforms(answer, "FaultRule")


def rule_hits():
    return [rule["hits"] for rule in conforms(call("GET", "/api/v1/faults"), "FaultListing")["faults"]]


def ready_status():
    deadline = time.monotonic() + 60
    while True:
        try:
            answer = call("GET", "/api/v1/status")
            if answer.status_code == 200 and answer.json()["ready"]:
                return answer.json()
        except requests.ConnectionError:
            pass
        check(time.monotonic() < deadline, "herald up was not ready within 60 s")
        time.sleep(0.2)


def deliveries(door, token=None, **params):
    listing = conforms(call("GET", "/api/v1/deliveries", door=door, **params), "DeliveryListing")
    return listing["deliveries"]


def fcm_part(status):
    fcm = status["fcm"]
    os.environ.update(HTTPS_PROXY=fcm["proxy"], REQUESTS_CA_BUNDLE=status["apns"]["certificateAuthority"],
                      GOOGLE_APPLICATION_CREDENTIALS=fcm["credentials"])
    import firebase_admin
    from firebase_admin import exceptions, messaging
    app = firebase_admin.initialize_app(name="faults")
    token = fcm["token"]

    def send(title, **target):
        target = target or {"token": token}
        return messaging.send(messaging.Message(notification=messaging.Notification(title=title), **target), app=app)

    def raised(title, **target):
        try:
            send(title, **target)
        except exceptions.FirebaseError as error:
            return error
        sys.exit(f"FAILED: {title}: sent, not refused")

    try:
        # Each errorCode, firebase-admin's exception class, and how many times it asked: it retries 500 and 503 four
        # times (with backoff), and a 401 after refreshing its access token; the others it raises at once. (No
        # Retry-After here: with one, it retries a 429 too.)
        classes = []
        for code in ["UNREGISTERED", "QUOTA_EXCEEDED", "SENDER_ID_MISMATCH", "THIRD_PARTY_AUTH_ERROR",
                     "INVALID_ARGUMENT", "INTERNAL"]:
            call("DELETE", "/api/v1/faults")
            rule = add_rule({"door": "fcm", "match": {"token": token}, "effect": {"errorCode": code}})
            error = raised(f"fcm {code}")
            body = error.http_response.json()["error"]
            check(body["details"][0]["errorCode"] == code and rule["id"] in body["message"],
                  f"Google's error JSON: {body}")
            classes.append(f"{code}={type(error).__name__}x{rule_hits()[0]}")
        print("fcm", " ".join(classes))

        # UNAVAILABLE with Retry-After, twice: firebase-admin waits and retries, the third attempt is sent.
        call("DELETE", "/api/v1/faults")
        add_rule({"door": "fcm", "match": {"token": token}, "effect": {"status": 503, "retryAfter": 1}, "times": 2})
        started = time.monotonic()
        name = send("fcm after two 503s")
        took = time.monotonic() - started
        check(name.startswith("projects/") and rule_hits() == [2] and took >= 2,
              f"retried after 503: {name} {rule_hits()} {took:.2f} s")
        logged = deliveries("fcm", state="Discarded - Fault")
        check(len(logged) >= 2 and all("fault-" in d["events"][-1]["detail"] for d in logged), f"logged: {logged}")
        print("fcm 503 twice, retried after Retry-After, sent")

        # A quota of two per token in 2 s: the third is answered QUOTA_EXCEEDED with Retry-After, which firebase-admin
        # waits out before it sends again — and then it is sent.
        call("DELETE", "/api/v1/faults")
        add_rule({"door": "fcm", "match": {"token": token}, "effect": {"quota": {"requests": 2, "per": 2}}})
        send("fcm quota 1")
        send("fcm quota 2")
        started = time.monotonic()
        send("fcm quota 3")
        took = time.monotonic() - started
        check(rule_hits() == [1] and took >= 0.5, f"quota: {rule_hits()} after {took:.2f} s")
        refused = [d for d in deliveries("fcm", state="Discarded - Fault")
                   if d["payload"]["aps"]["alert"]["title"] == "fcm quota 3"]
        check(len(refused) == 1 and "Retry-After" in refused[0]["events"][-1]["detail"], f"logged: {refused}")
        print("fcm quota 2/2 s: the third QUOTA_EXCEEDED, waited out by firebase-admin, sent")

        # A topic message refused before its fan-out.
        call("DELETE", "/api/v1/faults")
        add_rule({"door": "fcm", "match": {"topic": "faults"}, "effect": {"errorCode": "QUOTA_EXCEEDED"}, "times": 1})
        error = raised("fcm topic", topic="faults")
        check(type(error).__name__ == "QuotaExceededError", f"topic: {type(error).__name__}")
        print("fcm topic QuotaExceededError")

        # A late answer: handled as usual, answered no sooner than the delay.
        add_rule({"door": "fcm", "effect": {"delay": 1.5}, "times": 1})
        started = time.monotonic()
        send("fcm late")
        took = time.monotonic() - started
        check(took >= 1.5, f"late: {took:.3f} s")
        print("fcm delayed")

        # The connection closed once the message was handled: firebase-admin sends it again, as a new message —
        # FCM has no idempotency key, so the device gets it twice (docs/faults.md).
        call("DELETE", "/api/v1/faults")
        add_rule({"door": "fcm", "match": {"token": token}, "effect": {"close": True}, "times": 1})
        send("fcm closed")
        check(rule_hits() == [1], f"close hit once: {rule_hits()}")
        closed = [d["state"] for d in deliveries("fcm") if d["payload"]["aps"]["alert"]["title"] == "fcm closed"]
        check(closed == ["Delivered to Device"] * 2, f"sent again after the close: {closed}")
        print("fcm close, resent by firebase-admin, delivered twice")
    finally:
        firebase_admin.delete_app(app)
        for name in ("HTTPS_PROXY", "REQUESTS_CA_BUNDLE", "GOOGLE_APPLICATION_CREDENTIALS"):
            del os.environ[name]


def web_push_part(status):
    from pywebpush import WebPushException, webpush
    web = status["webPush"]
    with open(web["subscriptionFile"]) as f:
        subscription = json.load(f)
    endpoint_id = subscription["endpoint"].rsplit("/", 1)[1]
    os.environ["REQUESTS_CA_BUNDLE"] = status["apns"]["certificateAuthority"]

    def push(title):
        message = {"web_push": 8030, "notification": {"title": title, "navigate": web["origin"] + "/"}}
        return webpush(subscription, data=json.dumps(message), vapid_private_key=web["vapidKeyFile"],
                       vapid_claims={"sub": "mailto:ci@example.com"}, ttl=60)

    def refused(title):
        try:
            push(title)
        except WebPushException as error:
            return error.response
        sys.exit(f"FAILED: {title}: accepted, not refused")

    try:
        answer = call("POST", "/api/v1/faults", json={"door": "webpush", "effect": {"goaway": "Shutdown"}})
        check(answer.status_code == 400 and conforms(answer, "Error")["field"] == "effect.goaway",
              f"no GOAWAY on HTTP/1.1: {answer.text}")

        call("DELETE", "/api/v1/faults")
        add_rule({"door": "webpush", "match": {"token": endpoint_id}, "effect": {"status": 429, "retryAfter": 30},
                  "times": 1})
        response = refused("web 429")
        check(response.status_code == 429 and response.headers.get("Retry-After") == "30"
              and response.json() == {"reason": "TooManyRequests"}, f"429: {response.status_code} {response.text}")
        check(push("web after 429").status_code == 201, "the next push is accepted")
        print("webpush 429 TooManyRequests retry-after 30 then 201")

        seen = []
        for status_code in (410, 413, 503):
            call("DELETE", "/api/v1/faults")
            add_rule({"door": "webpush", "effect": {"status": status_code}, "times": 1})
            response = refused(f"web {status_code}")
            seen.append(f"{response.status_code} {response.json()['reason']}")
        check(seen == ["410 Gone", "413 PayloadTooLarge", "503 ServiceUnavailable"], f"answers: {seen}")
        logged = deliveries("webpush", state="Discarded - Fault")
        check(len(logged) >= 4, f"refused web pushes logged: {logged}")
        print("webpush", ", ".join(seen))

        call("DELETE", "/api/v1/faults")
        add_rule({"door": "webpush", "effect": {"quota": {"requests": 1, "per": 60}}})
        check(push("web quota 1").status_code == 201, "first within the quota")
        response = refused("web quota 2")
        check(response.status_code == 429 and 0 < int(response.headers["Retry-After"]) <= 60,
              f"quota: {response.status_code} {response.headers}")
        print("webpush quota 1/60 s then 429")

        call("DELETE", "/api/v1/faults")
        add_rule({"door": "webpush", "effect": {"delay": 1.5}, "times": 1})
        started = time.monotonic()
        check(push("web late").status_code == 201 and time.monotonic() - started >= 1.5, "late 201")
        print("webpush delayed 201")

        add_rule({"door": "webpush", "effect": {"close": True}, "times": 1})
        try:
            push("web closed")
            sys.exit("FAILED: a closed connection answered")
        except requests.ConnectionError:
            pass
        check(rule_hits() == [1, 1], f"close hit: {rule_hits()}")
        print("webpush close unanswered")
    finally:
        del os.environ["REQUESTS_CA_BUNDLE"]


def main():
    global DOCUMENT
    status = ready_status()
    DOCUMENT = requests.get(API + "/api/v1/openapi.json", timeout=30).json()
    call("DELETE", "/api/v1/faults")
    conforms(call("DELETE", "/api/v1/deliveries"), "Deleted")
    # Mistakes of these doors: 400, the field named.
    for rule, field in [({"door": "fcm", "effect": {"status": 410}}, "effect.status"),
                        ({"door": "fcm", "effect": {"reason": "TooManyRequests"}}, "effect.reason"),
                        ({"door": "fcm", "effect": {"goaway": "Shutdown"}}, "effect.goaway"),
                        ({"door": "webpush", "effect": {"rstStream": "CANCEL"}}, "effect.rstStream"),
                        ({"door": "webpush", "effect": {"quota": {"requests": 0, "per": 1}}}, "effect.quota.requests")]:
        answer = call("POST", "/api/v1/faults", json=rule)
        check(answer.status_code == 400 and conforms(answer, "Error")["field"] == field, f"{rule}: {answer.text}")
    print("mistakes named")
    fcm_part(status)
    web_push_part(status)
    conforms(call("DELETE", "/api/v1/faults"), "Deleted")
    print("ok")


main()
