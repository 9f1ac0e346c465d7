"""Herald's fault rules from Python: make the APNs door fail as APNs does, and check a provider's handling of it.

Waits for `herald up`, removes every rule, then adds rules through the test-bed API (`/api/v1/faults`) and pushes to
the demo app with aioapns (unmodified but for host and CA) and with httpx over HTTP/2 (to read the answer's headers):
a 429 with Retry-After once, then the push goes through; a 410 Unregistered with its timestamp; a late answer; a
seeded 50 % rule whose hits repeat run after run; `after` + `times` hitting exactly the requests they name; a quota
per token and per connection; a refused push's delivery-log entry with its rule; mistakes answered 400 with the field
named. Every answer is checked against the API's OpenAPI document.

    HERALD_API=http://127.0.0.1:<console port> HERALD_TOKEN=<operator token> python3 docs/test-bed/faults_example.py

Needs requests, aioapns, httpx, h2, PyJWT (aioapns brings it) and jsonschema from PyPI. Exits non-zero, saying why, on
the first thing that is not as expected.
"""
import asyncio
import os
import ssl
import sys
import time

import httpx
import jsonschema
import jwt
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
    body = answer.json()
    jsonschema.validate(body, {"$ref": f"#/components/schemas/{schema}", "components": DOCUMENT["components"]},
                        cls=jsonschema.Draft202012Validator)
    return body


def call(method, path, json=None, **params):
    return requests.request(method, API + path, headers=AUTH, params=params, json=json, timeout=30)


def add_rule(rule):
    answer = call("POST", "/api/v1/faults", json=rule)
    check(answer.status_code == 201, f"rule added: {answer.status_code} {answer.text}")
    return conforms(answer, "FaultRule")


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


class Provider:
    """The demo app's provider: aioapns for pushes, httpx for the answers' headers."""

    def __init__(self, status):
        apns = status["apns"]
        self.url = apns["url"]
        host, port = self.url.removeprefix("https://").split(":")
        APNsDevelopmentClientProtocol.APNS_SERVER, APNsDevelopmentClientProtocol.APNS_PORT = host, int(port)
        with open(apns["keyFile"]) as f:
            self.key = f.read()
        self.key_id, self.team_id = apns["keyID"], apns["teamID"]
        self.topic = status["demoApp"]["bundleID"]
        self.ca = apns["certificateAuthority"]
        self.client = APNs(key=self.key, key_id=self.key_id, team_id=self.team_id, topic=self.topic,
                           use_sandbox=True, ssl_context=ssl.create_default_context(cafile=self.ca))

    async def push(self, token, text="from the faults example"):
        request = NotificationRequest(device_token=token, message={"aps": {"alert": text}}, push_type=PushType.ALERT)
        return await asyncio.wait_for(self.client.send_notification(request), timeout=30)

    def raw_push(self, token):
        """One push over HTTP/2 with httpx: the status, headers and JSON body as APNs would send them."""
        bearer = jwt.encode({"iss": self.team_id, "iat": int(time.time())}, self.key, algorithm="ES256",
                            headers={"kid": self.key_id})
        with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=self.ca), timeout=30) as client:
            answer = client.post(f"{self.url}/3/device/{token}", json={"aps": {"alert": "raw"}},
                                 headers={"authorization": f"bearer {bearer}", "apns-topic": self.topic,
                                          "apns-push-type": "alert"})
            check(answer.http_version == "HTTP/2", f"HTTP/2: {answer.http_version}")
            return answer


async def hit_sequence(provider, token, seed, count=12):
    """Which of `count` pushes a fresh seeded 50 % rule refuses (1-based), and its hits as the API counts them."""
    call("DELETE", "/api/v1/faults")
    rule = add_rule({"door": "apns", "match": {"token": token}, "effect": {"status": 503}, "probability": 0.5,
                     "seed": seed})
    refused = []
    for n in range(1, count + 1):
        result = await provider.push(token)
        if result.status == "503":
            check(result.description == "ServiceUnavailable", f"503's reason: {result.description}")
            refused.append(n)
        else:
            check(result.is_successful, f"passed pushes are accepted: {result.status} {result.description}")
    listing = conforms(call("GET", "/api/v1/faults"), "FaultListing")
    check(listing["faults"][0]["id"] == rule["id"] and listing["faults"][0]["hits"] == len(refused),
          f"hits counted: {listing} {refused}")
    return refused


async def main():
    global DOCUMENT
    status = ready_status()
    DOCUMENT = requests.get(API + "/api/v1/openapi.json", timeout=30).json()
    token = status["demoApp"]["deviceToken"]
    provider = Provider(status)
    conforms(call("DELETE", "/api/v1/faults"), "Deleted")
    check(conforms(call("GET", "/api/v1/faults"), "FaultListing") == {"faults": []}, "no rules")

    # Mistakes: 400, the field named.
    for rule, field in [({"door": "apns", "effect": {"status": 418}}, "effect.status"),
                        ({"door": "apns", "effect": {"status": 429, "reason": "Unregistered"}}, "effect.reason"),
                        ({"door": "apns", "effect": {"status": 429}, "probability": 2}, "probability"),
                        ({"door": "apns", "effect": {"delay": -1}}, "effect.delay"),
                        ({"door": "apns", "effect": {"status": 429}, "times": -1}, "times"),
                        ({"door": "smtp", "effect": {"status": 429}}, "door"),
                        ({"door": "apns", "effect": {"status": 429}, "colour": "red"}, "colour")]:
        answer = call("POST", "/api/v1/faults", json=rule)
        check(answer.status_code == 400 and conforms(answer, "Error")["field"] == field, f"{rule}: {answer.text}")
    print("mistakes named")

    # 429 once, with Retry-After; the next push goes through.
    rule = add_rule({"door": "apns", "match": {"token": token}, "effect": {"status": 429, "retryAfter": 3},
                     "times": 1})
    check(rule["effect"] == {"status": 429, "reason": "TooManyRequests", "retryAfter": 3}, f"defaults: {rule}")
    check(rule["after"] == 0 and rule["probability"] == 1 and rule["times"] == 1 and rule["hits"] == 0
          and isinstance(rule["seed"], int), f"every default written out: {rule}")
    answer = provider.raw_push(token)
    check(answer.status_code == 429 and answer.json() == {"reason": "TooManyRequests"}
          and answer.headers.get("retry-after") == "3" and answer.headers.get("apns-id"),
          f"429 as APNs sends it: {answer.status_code} {answer.headers} {answer.text}")
    refused_id = answer.headers["apns-id"].lower()
    result = await provider.push(token)
    check(result.is_successful, f"the rule is spent: {result.status} {result.description}")
    listing = conforms(call("GET", "/api/v1/faults"), "FaultListing")
    check(listing["faults"][0]["hits"] == 1 and listing["faults"][0]["spent"], f"spent: {listing}")
    print("429 TooManyRequests retry-after 3 then 200")

    # The refused push is in the delivery log with its rule; it was neither kept nor delivered.
    deliveries = conforms(call("GET", "/api/v1/deliveries", token=token, state="Discarded - Fault"), "DeliveryListing")
    faulted = [d for d in deliveries["deliveries"] if d["apnsID"] == refused_id]
    check(len(faulted) == 1 and rule["id"] in faulted[0]["events"][-1]["detail"]
          and not any(e["kind"] in ("stored", "delivered") for e in faulted[0]["events"]),
          f"logged with its rule: {deliveries}")
    print("logged", faulted[0]["state"])

    # 410 Unregistered with the rule's timestamp, as aioapns reads it.
    call("DELETE", "/api/v1/faults")
    add_rule({"door": "apns", "effect": {"status": 410, "timestamp": 1767225600000}, "times": 1})
    result = await provider.push(token)
    check(result.status == "410" and result.description == "Unregistered" and result.timestamp == 1767225600000,
          f"410: {result.status} {result.description} {result.timestamp}")
    print("410 Unregistered", result.timestamp)

    # A late answer: handled as usual (delivered), answered no sooner than the delay.
    add_rule({"door": "apns", "effect": {"delay": 1.5}, "times": 1})
    started = time.monotonic()
    result = await provider.push(token, "late")
    took = time.monotonic() - started
    check(result.is_successful and took >= 1.5, f"late: {result.status} after {took:.3f} s")
    print("delayed 200")

    # after + times: exactly the requests they name.
    call("DELETE", "/api/v1/faults")
    add_rule({"door": "apns", "effect": {"status": 500}, "after": 2, "times": 2})
    statuses = [(await provider.push(token)).status for _ in range(6)]
    check(statuses == ["200", "200", "500", "500", "200", "200"], f"after 2 times 2: {statuses}")
    print("after 2 times 2", " ".join(statuses))

    # A seed gives the same hits run after run.
    first = await hit_sequence(provider, token, seed=20261207)
    second = await hit_sequence(provider, token, seed=20261207)
    check(first == second and 0 < len(first) < 12, f"the same hits: {first} {second}")
    print("seeded hits repeat", len(first))

    # A quota: two pushes per token a minute, the third 429 TooManyRequests with the seconds left as Retry-After.
    call("DELETE", "/api/v1/faults")
    add_rule({"door": "apns", "match": {"token": token}, "effect": {"quota": {"requests": 2, "per": 60}}})
    statuses = [(await provider.push(token)).status for _ in range(2)]
    answer = provider.raw_push(token)
    check(statuses == ["200", "200"] and answer.status_code == 429
          and answer.json() == {"reason": "TooManyRequests"} and 0 < int(answer.headers["retry-after"]) <= 60,
          f"quota by token: {statuses} {answer.status_code} {answer.headers} {answer.text}")
    # By connection: aioapns's one connection meets it; each of httpx's new connections starts a count of its own.
    call("DELETE", "/api/v1/faults")
    add_rule({"door": "apns", "effect": {"quota": {"requests": 1, "per": 60, "by": "connection"}}})
    statuses = [(await provider.push(token)).status for _ in range(2)]
    fresh = [provider.raw_push(token).status_code for _ in range(2)]
    check(statuses == ["200", "429"] and fresh == [200, 200], f"quota by connection: {statuses} {fresh}")
    print("quota 429 TooManyRequests retry-after", "by token, by connection")

    gone = conforms(call("DELETE", "/api/v1/faults/fault-0"), "Error")
    check(gone.get("parameter") == "id", f"404 names the id: {gone}")
    check(conforms(call("DELETE", "/api/v1/faults"), "Deleted")["deleted"] == 1, "one rule left to remove")
    print("ok")


asyncio.run(main())
