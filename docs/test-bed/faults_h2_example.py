"""Herald's frame-level fault rules as a provider's HTTP/2 stack meets them, with the Python h2 library.

Adds rules through the test-bed API (`/api/v1/faults`) and reads the frames Herald's APNs door answers with: a stream
reset (`RST_STREAM INTERNAL_ERROR`: the push was handled, its answer lost; `REFUSED_STREAM`: not processed), a GOAWAY
whose last-stream-id is below the push's stream with `{"reason":"Shutdown"}` as its data, a connection closed with the
push unanswered (the retry with the same apns-id is answered 200 and not delivered twice), and a connection closed
before the server's SETTINGS (Pushy #831). Each push's fate is read back from the delivery log.

    HERALD_API=http://127.0.0.1:<console port> HERALD_TOKEN=<operator token> python3 docs/test-bed/faults_h2_example.py

Needs requests, h2 and PyJWT from PyPI. Exits non-zero, saying why, on the first thing that is not as expected.
"""
import json
import os
import socket
import ssl
import sys
import time
import uuid

import h2.config
import h2.connection
import h2.events
import jwt
import requests

API = os.environ["HERALD_API"].rstrip("/")
AUTH = {"Authorization": f"Bearer {os.environ['HERALD_TOKEN']}"}


def check(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")


def call(method, path, json_body=None, **params):
    answer = requests.request(method, API + path, headers=AUTH, params=params, json=json_body, timeout=30)
    check(answer.status_code < 300, f"{method} {path}: {answer.status_code} {answer.text}")
    return answer.json()


def ready_status():
    deadline = time.monotonic() + 60
    while True:
        try:
            answer = requests.get(API + "/api/v1/status", headers=AUTH, timeout=30)
            if answer.status_code == 200 and answer.json()["ready"]:
                return answer.json()
        except requests.ConnectionError:
            pass
        check(time.monotonic() < deadline, "herald up was not ready within 60 s")
        time.sleep(0.2)


class Connection:
    """One HTTP/2 connection to the APNs door, read frame by frame."""

    def __init__(self, status):
        apns = status["apns"]
        self.host, port = apns["url"].removeprefix("https://").split(":")
        context = ssl.create_default_context(cafile=apns["certificateAuthority"])
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection((self.host, int(port)), timeout=20)
        self.socket = context.wrap_socket(raw, server_hostname=self.host)
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.h2.initiate_connection()
        self.socket.sendall(self.h2.data_to_send())
        with open(apns["keyFile"]) as f:
            key = f.read()
        self.bearer = jwt.encode({"iss": apns["teamID"], "iat": int(time.time())}, key, algorithm="ES256",
                                 headers={"kid": apns["keyID"]})
        self.topic = status["demoApp"]["bundleID"]
        self.settings = False

    def events(self):
        """The next events (a frame may come in several reads: [] until it is whole); None once the server closed the
        connection."""
        data = self.socket.recv(65535)
        if not data:
            return None
        events = self.h2.receive_data(data)
        for event in events:
            if isinstance(event, h2.events.RemoteSettingsChanged):
                self.settings = True
        outgoing = self.h2.data_to_send()
        if outgoing:
            self.socket.sendall(outgoing)
        return events

    def push(self, token, apns_id=None, body=None):
        """Sends a push on a new stream; returns its stream ID and apns-id."""
        stream = self.h2.get_next_available_stream_id()
        apns_id = apns_id or str(uuid.uuid4())
        payload = body or json.dumps({"aps": {"alert": f"h2 {apns_id[:8]}"}}).encode()
        self.h2.send_headers(stream, [
            (":method", "POST"), (":scheme", "https"), (":authority", self.host), (":path", f"/3/device/{token}"),
            ("authorization", f"bearer {self.bearer}"), ("apns-topic", self.topic), ("apns-push-type", "alert"),
            ("apns-id", apns_id)])
        self.h2.send_data(stream, payload, end_stream=True)
        self.socket.sendall(self.h2.data_to_send())
        return stream, apns_id, payload

    def outcome(self, stream):
        """What came for `stream`: ("answer", status), ("reset", code), ("goaway", last stream, data) or ("closed",)."""
        status = None
        while True:
            events = self.events()
            if events is None:
                return ("closed",) if status is None else ("answer", status)
            for event in events:
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    status = dict(event.headers)[b":status"].decode()
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    return ("answer", status)
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                    return ("reset", int(event.error_code))
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return ("goaway", event.last_stream_id, event.additional_data, int(event.error_code))

    def close(self):
        try:
            self.socket.close()
        except OSError:
            pass


def delivery(token, apns_id):
    """The delivery log's entries for the push with this apns-id."""
    found = call("GET", "/api/v1/deliveries", token=token, limit=1000)["deliveries"]
    return [d for d in found if d["apnsID"] == apns_id.lower()]


def main():
    status = ready_status()
    token = status["demoApp"]["deviceToken"]
    call("DELETE", "/api/v1/faults")

    # RST_STREAM INTERNAL_ERROR: the push was handled (delivered), its answer lost; the connection goes on.
    call("POST", "/api/v1/faults", {"door": "apns", "effect": {"rstStream": "INTERNAL_ERROR"}, "times": 1})
    connection = Connection(status)
    stream, apns_id, _ = connection.push(token)
    outcome = connection.outcome(stream)
    check(outcome == ("reset", 2), f"RST_STREAM INTERNAL_ERROR: {outcome}")
    next_stream, _, _ = connection.push(token)
    check(connection.outcome(next_stream) == ("answer", "200"), "the connection goes on")
    logged = call("GET", "/api/v1/deliveries", token=token, state="Delivered to Device", wait=30)
    entry = delivery(token, apns_id)
    check(len(entry) == 1 and any(e["kind"] == "fault" and "RST_STREAM INTERNAL_ERROR" in e["detail"]
                                  for e in entry[0]["events"]), f"handled, answer lost: {entry} {logged}")
    print("rst INTERNAL_ERROR handled", entry[0]["state"])

    # RST_STREAM REFUSED_STREAM: not processed, and it was not.
    call("POST", "/api/v1/faults", {"door": "apns", "effect": {"rstStream": "REFUSED_STREAM"}, "times": 1})
    stream, apns_id, _ = connection.push(token)
    check(connection.outcome(stream) == ("reset", 7), "RST_STREAM REFUSED_STREAM")
    entry = delivery(token, apns_id)
    check(len(entry) == 1 and entry[0]["state"] == "Discarded - Fault"
          and not any(e["kind"] in ("stored", "delivered") for e in entry[0]["events"]), f"refused: {entry}")
    print("rst REFUSED_STREAM refused")

    # GOAWAY Shutdown: last-stream-id below the push's stream, Apple's data; the push was not processed.
    call("POST", "/api/v1/faults", {"door": "apns", "effect": {"goaway": "Shutdown"}, "times": 1})
    stream, apns_id, _ = connection.push(token)
    outcome = connection.outcome(stream)
    check(outcome[0] == "goaway" and outcome[1] == stream - 2 and json.loads(outcome[2]) == {"reason": "Shutdown"}
          and outcome[3] == 0, f"GOAWAY: {outcome} for stream {stream}")
    entry = delivery(token, apns_id)
    check(len(entry) == 1 and entry[0]["state"] == "Discarded - Fault", f"refused by the GOAWAY: {entry}")
    connection.close()
    print("goaway Shutdown last-stream-id", outcome[1], "of", stream)

    # Closed with the push unanswered: it was handled; the retry (same apns-id and payload) is 200, not delivered twice.
    call("POST", "/api/v1/faults", {"door": "apns", "effect": {"close": True}, "times": 1})
    connection = Connection(status)
    stream, apns_id, payload = connection.push(token)
    check(connection.outcome(stream) == ("closed",), "closed unanswered")
    connection.close()
    retry = Connection(status)
    stream, _, _ = retry.push(token, apns_id=apns_id, body=payload)
    check(retry.outcome(stream) == ("answer", "200"), "the retry is accepted")
    retry.close()
    entries = delivery(token, apns_id)
    states = sorted(d["state"] for d in entries)
    check(states == ["Delivered to Device", "Discarded - Duplicate"], f"delivered once: {entries}")
    print("close handled, retry not delivered twice")

    # Closed before SETTINGS: the client sees the connection end before any frame; the next one works.
    call("POST", "/api/v1/faults", {"door": "apns", "effect": {"closeBeforeSettings": True}, "times": 1})
    connection = Connection(status)
    events = connection.events()
    check(events is None and not connection.settings, f"closed before SETTINGS: {events}")
    connection.close()
    connection = Connection(status)
    stream, _, _ = connection.push(token)
    check(connection.outcome(stream) == ("answer", "200"), "the next connection works")
    connection.close()
    print("closed before settings")
    call("DELETE", "/api/v1/faults")
    print("ok")


main()
