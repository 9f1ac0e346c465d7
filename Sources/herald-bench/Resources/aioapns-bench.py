"""Sends pushes with aioapns (PyPI) to an APNs-compatible server and prints one JSON line of figures.

Driven by `herald-bench provider`. aioapns has no option for a server other than Apple's two, so this
points its protocol class at the given host and port; everything else (connection pool, HTTP/2 via h2,
JWT signing, request encoding) is aioapns's own.
"""

import argparse
import asyncio
import json
import ssl
import time
import uuid

from importlib.metadata import version

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--tokens-file", required=True)
    parser.add_argument("--payload-file", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    arguments = parser.parse_args()
    print(json.dumps(asyncio.run(run(arguments))), flush=True)


async def run(arguments: argparse.Namespace) -> dict:
    APNsDevelopmentClientProtocol.APNS_SERVER = arguments.host
    APNsDevelopmentClientProtocol.APNS_PORT = arguments.port
    context = ssl.create_default_context(cafile=arguments.cafile)
    # aioapns offers no ALPN; Apple's servers and Herald's gateway speak HTTP/2 without it, nginx needs it.
    context.set_alpn_protocols(["h2"])
    with open(arguments.key_file) as file:
        key = file.read()
    with open(arguments.tokens_file) as file:
        tokens = [line.strip() for line in file if line.strip()]
    with open(arguments.payload_file) as file:
        message = json.load(file)
    client = APNs(
        key=key,
        key_id=arguments.key_id,
        team_id=arguments.team_id,
        topic=arguments.topic,
        use_sandbox=True,
        ssl_context=context,
    )
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < arguments.count:
            index = next_index
            next_index += 1
            request = NotificationRequest(
                device_token=tokens[index % len(tokens)],
                message=message,
                notification_id=str(uuid.uuid4()),
                push_type=PushType.ALERT,
            )
            started = time.perf_counter()
            try:
                result = await client.send_notification(request)
                status = str(result.status)
            except Exception as error:  # a failed stream or connection counts as a failure
                status = type(error).__name__
            latencies.append((time.perf_counter() - started) * 1000)
            statuses[status] = statuses.get(status, 0) + 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(arguments.concurrency)))
    seconds = time.perf_counter() - started
    client.pool.close()
    latencies.sort()

    def percentile(fraction: float) -> float:
        return latencies[min(len(latencies) - 1, int(fraction * len(latencies)))] if latencies else 0.0

    return {
        "library": "aioapns " + version("aioapns"),
        "count": arguments.count,
        "seconds": seconds,
        "statuses": statuses,
        "p50": percentile(0.50),
        "p99": percentile(0.99),
    }


if __name__ == "__main__":
    main()
