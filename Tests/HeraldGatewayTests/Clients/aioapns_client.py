"""Pushes with aioapns (PyPI), unmodified: only the host, port and trusted CA change.

Usage: aioapns_client.py HOST PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC TOKEN [REVOKED_TOKEN]
Prints one line per notification: "<status> <description or ->", then "connections <n>": how many connections
aioapns opened (1 unless the server broke one).
"""
import asyncio
import ssl
import sys
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol


async def main() -> None:
    host, port, ca_file, key_file, key_id, team_id, topic, token = sys.argv[1:9]
    revoked = sys.argv[9] if len(sys.argv) > 9 else None
    APNsDevelopmentClientProtocol.APNS_SERVER = host
    APNsDevelopmentClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=ca_file)
    with open(key_file) as f:
        key = f.read()
    client = APNs(key=key, key_id=key_id, team_id=team_id, topic=topic, use_sandbox=True, ssl_context=context,
                  err_func=lambda request, result: asyncio.sleep(0))
    requests = [
        NotificationRequest(device_token=token, message={"aps": {"alert": "from aioapns", "badge": 1}},
                            notification_id=str(uuid.uuid4()), push_type=PushType.ALERT),
        NotificationRequest(device_token=token, message={"aps": {"content-available": 1}},
                            push_type=PushType.BACKGROUND, priority=5),
    ]
    opened = 0
    create_connection = client.pool.create_connection

    async def counting_create_connection():
        nonlocal opened
        opened += 1
        return await create_connection()

    client.pool.create_connection = counting_create_connection
    if revoked:
        requests.append(NotificationRequest(device_token=revoked, message={"aps": {"alert": "gone"}},
                                            push_type=PushType.ALERT))
    for request in requests:
        result = await asyncio.wait_for(client.send_notification(request), timeout=20)
        print(result.status, result.description or "-", flush=True)
    print("connections", opened, flush=True)


asyncio.run(main())
