// Herald's test-bed API from Node, as a CI job uses it (docs/test-bed-api.md): Node 18+'s fetch for the API, and
// node:http2 with an ES256 provider token for the push, as Node's APNs libraries send it. No dependencies.
//
//   HERALD_API=http://127.0.0.1:<console port> HERALD_TOKEN=<operator token> node docs/test-bed/ci_example.mjs
//
// Exits non-zero, saying why, on the first thing that is not as expected.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';

const api = process.env.HERALD_API.replace(/\/$/, '');
const auth = { Authorization: `Bearer ${process.env.HERALD_TOKEN}` };

function check(condition, message) {
  if (!condition) {
    console.error(`FAILED: ${message}`);
    process.exit(1);
  }
}

async function call(method, path, params = {}) {
  const url = new URL(api + path);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const answer = await fetch(url, { method, headers: auth, signal: AbortSignal.timeout(75_000) });
  return { status: answer.status, body: await answer.json() };
}

async function readyStatus() {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const { status, body } = await call('GET', '/api/v1/status');
      if (status === 200 && body.ready) return body;
    } catch {
      // not listening yet
    }
    check(Date.now() < deadline, 'herald up was not ready within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function providerToken(keyID, teamID, keyFile) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'ES256', kid: keyID })}.${part({ iss: teamID, iat: Math.floor(Date.now() / 1000) })}`;
  const signature = crypto.sign('sha256', Buffer.from(unsigned), {
    key: fs.readFileSync(keyFile), dsaEncoding: 'ieee-p1363',
  });
  return `${unsigned}.${signature.toString('base64url')}`;
}

function push(status, token, payload) {
  const { apns, demoApp } = status;
  return new Promise((resolve, reject) => {
    const session = http2.connect(apns.url, { ca: fs.readFileSync(apns.certificateAuthority) });
    session.on('error', reject);
    const request = session.request({
      ':method': 'POST', ':path': `/3/device/${token}`, authorization: `bearer ${providerToken(apns.keyID, apns.teamID, apns.keyFile)}`,
      'apns-topic': demoApp.bundleID, 'apns-push-type': 'alert', 'apns-priority': '10',
    });
    let headers;
    request.on('response', (received) => { headers = received; });
    request.on('data', () => {});
    request.on('end', () => { session.close(); resolve(headers); });
    request.on('error', reject);
    request.end(JSON.stringify(payload));
  });
}

const status = await readyStatus();
const token = status.demoApp.deviceToken;
check(token, `the demo app has a device token: ${JSON.stringify(status)}`);
console.log('ready', status.demoApp.bundleID);

const cleared = await call('DELETE', '/api/v1/deliveries', { token });
check(cleared.status === 200 && cleared.body.deleted >= 0, JSON.stringify(cleared));
const clearedShown = await call('DELETE', '/api/v1/notifications', { bundle: status.demoApp.bundleID });
check(clearedShown.status === 200 && clearedShown.body.deleted >= 0, JSON.stringify(clearedShown));

// Wait on the server while the push is sent.
const waiting = call('GET', '/api/v1/deliveries', { token, state: 'Delivered to Device', wait: 30 });
const answer = await push(status, token, { aps: { alert: { title: 'CI', body: 'from Node' } }, order: 7 });
check(answer[':status'] === 200, `the push: ${JSON.stringify(answer)}`);
const { status: code, body } = await waiting;
check(code === 200 && body.complete && body.deliveries.length === 1, JSON.stringify(body));
const [delivery] = body.deliveries;
check(delivery.uniqueID === answer['apns-unique-id'], `the push's apns-unique-id: ${delivery.uniqueID}`);
check(delivery.payload.order === 7 && delivery.door === 'apns' && delivery.state === 'Delivered to Device',
  JSON.stringify(delivery));
console.log('delivered', delivery.payload.order);

// The app's notification, as its UNUserNotificationCenter lists it (a push's identifier is its apns-id), once the
// person has been shown it: presented, as a banner.
const shown = await call('GET', '/api/v1/notifications', {
  bundle: status.demoApp.bundleID, identifier: answer['apns-id'], presented: true, wait: 30,
});
check(shown.status === 200 && shown.body.complete && shown.body.notifications[0]?.body === 'from Node'
  && shown.body.notifications[0].userInfo.order === 7
  && shown.body.notifications[0].presentation === 'banner', JSON.stringify(shown));
// The same notification found by the push's apns-unique-id, the delivery log's uniqueID.
const byPush = await call('GET', '/api/v1/notifications', { uniqueID: answer['apns-unique-id'] });
check(byPush.status === 200 && byPush.body.notifications.length === 1
  && byPush.body.notifications[0].identifier === answer['apns-id'], JSON.stringify(byPush));
console.log('shown', shown.body.notifications[0].title);

const missing = await call('GET', '/api/v1/deliveries', { wait: -1 });
check(missing.status === 400 && missing.body.parameter === 'wait', JSON.stringify(missing));
console.log('ok');
