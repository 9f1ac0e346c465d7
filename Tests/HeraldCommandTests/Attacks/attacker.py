"""Issue 71's attacks on a gateway, as an attacker runs them: small clients on raw sockets, the gateway's memory and
descriptors read from /proc. Each attack prints one JSON line of what it saw.

  attacker.py flood URL CA PID SECONDS    a device that says hello, then sends register in a loop, never reading, until
                                          the gateway stops reading (3 s without a byte taken) or SECONDS pass
  attacker.py idle HOST PORT COUNT SECONDS  COUNT TCP connections that send nothing; how many the gateway closed
  attacker.py slowloris HOST PORT SECONDS   an HTTP head, one byte at a time, one every 2 s; when the gateway closed it
"""

import base64
import json
import os
import socket
import ssl
import sys
import time
from urllib.parse import urlparse


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def frame(text):
    """A masked WebSocket text frame, as a client sends it (RFC 6455 5.2)."""
    payload = text.encode()
    mask = os.urandom(4)
    head = bytearray([0x81])
    if len(payload) < 126:
        head.append(0x80 | len(payload))
    else:
        head.append(0x80 | 126)
        head += len(payload).to_bytes(2, "big")
    return bytes(head) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def device_socket(url, ca):
    parsed = urlparse(url)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Small buffers on the attacker's side: the gateway's answers, unread, fill them at once.
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    raw.settimeout(10)
    raw.connect((socket.gethostbyname(parsed.hostname), parsed.port))
    if parsed.scheme == "wss":
        context = ssl.create_default_context(cafile=ca)
        raw = context.wrap_socket(raw, server_hostname=parsed.hostname)
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        (
            f"GET {parsed.path} HTTP/1.1\r\nHost: {parsed.hostname}:{parsed.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = raw.recv(4096)
        if not chunk:
            raise SystemExit("the gateway closed the upgrade")
        answer += chunk
    if b" 101 " not in answer.split(b"\r\n")[0]:
        raise SystemExit(f"no upgrade: {answer[:200]!r}")
    return raw


def flood(url, ca, pid, seconds):
    before = rss_mb(pid)
    conn = device_socket(url, ca)
    conn.sendall(frame(json.dumps({"type": "hello", "deviceID": f"rogue-{os.getpid()}", "secret": "s"})))
    register = frame(json.dumps({"type": "register", "bundleID": "com.example.app", "environment": "development"}))
    batch = register * 256
    conn.settimeout(1)
    sent, peak, start, closed = 0, before, time.monotonic(), False
    end, last_progress, next_sample = start + seconds, start, 0.0
    while time.monotonic() < end and time.monotonic() - last_progress < 3:
        try:
            # Bytes, not whole frames: sendall would hide how far it got when the gateway stops reading.
            sent += conn.send(batch)
            last_progress = time.monotonic()
        except socket.timeout:
            pass  # The gateway stopped reading: its answers are not read, so it reads no more.
        except (ssl.SSLWantWriteError, BlockingIOError):
            pass
        except OSError:
            closed = True
            break
        if time.monotonic() >= next_sample:
            peak = max(peak, rss_mb(pid))
            next_sample = time.monotonic() + 0.2
    stalled_for = time.monotonic() - last_progress
    flooded_for = last_progress - start
    peak = max(peak, rss_mb(pid))
    conn.close()
    # Memory returns once the client leaves: the highest of the next 10 s' last samples.
    time.sleep(10)
    after = rss_mb(pid)
    print(json.dumps({"before_mb": round(before, 1), "peak_mb": round(peak, 1), "after_mb": round(after, 1),
                      "messages_sent": sent // len(register), "stalled_s": round(stalled_for, 1),
                      "flooded_s": round(flooded_for, 1),
                      "closed_by_gateway": closed}))


def idle(host, port, count, seconds, pid):
    sockets = []
    start = time.monotonic()
    for _ in range(count):
        try:
            sockets.append(socket.create_connection((host, port), timeout=2))
        except OSError:
            break  # The gateway's backlog is full: the port is at its cap.
    opened = len(sockets)
    time.sleep(max(0.0, min(2.0, seconds - (time.monotonic() - start))))
    held = descriptors(pid) if pid else 0
    time.sleep(max(0.0, seconds - (time.monotonic() - start)))
    closed = 0
    for s in sockets:
        s.setblocking(False)
        try:
            closed += 1 if s.recv(1) == b"" else 0
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print(json.dumps({"opened": opened, "closed_by_gateway": closed, "gateway_descriptors": held}))


def slowloris(host, port, seconds):
    conn = socket.create_connection((host, port), timeout=5)
    head = f"GET /login HTTP/1.1\r\nHost: {host}\r\nX-Slow: " + "a" * 1000
    start = time.monotonic()
    closed_after = None
    for byte in head.encode():
        if time.monotonic() - start > seconds:
            break
        try:
            conn.sendall(bytes([byte]))
            conn.settimeout(2)
            if conn.recv(4096) == b"":
                closed_after = time.monotonic() - start
                break
        except socket.timeout:
            continue
        except OSError:
            closed_after = time.monotonic() - start
            break
    conn.close()
    print(json.dumps({"closed_after_s": None if closed_after is None else round(closed_after, 1)}))


if __name__ == "__main__":
    attack, args = sys.argv[1], sys.argv[2:]
    if attack == "flood":
        flood(args[0], args[1], int(args[2]), float(args[3]))
    elif attack == "idle":
        idle(args[0], int(args[1]), int(args[2]), float(args[3]), int(args[4]) if len(args) > 4 else 0)
    elif attack == "slowloris":
        slowloris(args[0], int(args[1]), float(args[2]))
    else:
        raise SystemExit(f"unknown attack {attack}")
