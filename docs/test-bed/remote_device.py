"""Herald's test-bed API with the gateway and the device on different machines (docs/test-bed-api.md, "A device on
a machine of its own"): the gateway's console answers for the deliveries, the device (`herald device --api-port`)
for what it showed, on the same paths with the same JSON.

Waits on both at once — the gateway for the push's delivery, the device for the app's notification — then prints
`waiting`; whoever runs it sends the push (a provider, `herald push`); each wait answers on the server. Every answer
is checked against the OpenAPI document, which both serve.

    HERALD_GATEWAY_API=http://<gateway>:<console port> HERALD_TOKEN=<gateway's operator token> \
    HERALD_DEVICE_API=http://<device>:<api port> HERALD_DEVICE_TOKEN=<the device's operator token> \
    HERALD_BUNDLE=com.example.app python3 docs/test-bed/remote_device.py

Needs requests and jsonschema from PyPI. Exits non-zero, saying why, on the first thing that is not as expected.
"""
import os
import sys
import threading

import jsonschema
import requests

GATEWAY = os.environ["HERALD_GATEWAY_API"].rstrip("/")
DEVICE = os.environ["HERALD_DEVICE_API"].rstrip("/")
GATEWAY_AUTH = {"Authorization": f"Bearer {os.environ['HERALD_TOKEN']}"}
DEVICE_AUTH = {"Authorization": f"Bearer {os.environ['HERALD_DEVICE_TOKEN']}"}
BUNDLE = os.environ.get("HERALD_BUNDLE", "com.example.app")


def check(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")


def get(base, path, auth, **params):
    return requests.get(base + path, headers=auth, params=params, timeout=75)


def main():
    document = requests.get(GATEWAY + "/api/v1/openapi.json", timeout=30).json()
    check(requests.get(DEVICE + "/api/v1/openapi.json", timeout=30).json() == document, "one contract for both")

    def conforms(answer, schema):
        body = answer.json()
        jsonschema.validate(body, {"$ref": f"#/components/schemas/{schema}", "components": document["components"]},
                            cls=jsonschema.Draft202012Validator)
        return body

    # Each part answers where it lives; the device says where the deliveries are, and takes only its own token.
    elsewhere = get(DEVICE, "/api/v1/deliveries", DEVICE_AUTH)
    check(elsewhere.status_code == 404 and "gateway" in conforms(elsewhere, "Error")["error"], elsewhere.text)
    stranger = get(DEVICE, "/api/v1/notifications", GATEWAY_AUTH if GATEWAY_AUTH != DEVICE_AUTH else {})
    check(stranger.status_code == 401, f"the gateway's token opened the device's API: {stranger.status_code}")
    status = conforms(get(DEVICE, "/api/v1/status", DEVICE_AUTH), "Status")
    check(status["ready"], f"the device is not ready: {status}")
    requests.delete(DEVICE + "/api/v1/notifications", headers=DEVICE_AUTH, params={"bundle": BUNDLE}, timeout=30)

    answers = {}

    def wait(name, base, path, auth, schema, **params):
        answers[name] = conforms(get(base, path, auth, wait=30, **params), schema)

    waiters = [
        threading.Thread(target=wait, args=("delivery", GATEWAY, "/api/v1/deliveries", GATEWAY_AUTH, "DeliveryListing"),
                         kwargs={"topic": BUNDLE, "state": "Delivered to Device"}),
        threading.Thread(target=wait, args=("shown", DEVICE, "/api/v1/notifications", DEVICE_AUTH,
                                            "NotificationListing"), kwargs={"bundle": BUNDLE}),
    ]
    for waiter in waiters:
        waiter.start()
    print("waiting", flush=True)
    for waiter in waiters:
        waiter.join(timeout=40)
    check(answers.get("delivery", {}).get("complete"), f"the gateway's wait did not answer: {answers}")
    check(answers.get("shown", {}).get("complete"), f"the device's wait did not answer: {answers}")
    delivery = answers["delivery"]["deliveries"][0]
    shown = answers["shown"]["notifications"][0]
    check(shown["uniqueID"] == delivery["uniqueID"], "the device shows the push the gateway delivered")
    print("delivered", delivery["payload"]["aps"]["alert"]["title"])
    print("shown", shown["title"], shown["presented"])
    print("ok")


if __name__ == "__main__":
    main()
