import Foundation
import Mustache

/// The console's pages: Mustache templates (every `{{value}}` HTML-escaped; payloads, bundle IDs and reasons carry
/// other people's text) and its one stylesheet. Served by the console itself: no CDN, no build step.
enum ConsolePages {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            // The templates are this file's constants: one that does not parse is a bug the tests catch at once.
            if let template = try? MustacheTemplate(string: text) { library.register(template, named: name) }
        }
        return library
    }()

    static let templates: [String: String] = [
        "head": """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>{{title}} — Herald console</title>
        <link rel="stylesheet" href="/console.css"><script src="/console.js" defer></script></head><body>
        <header><strong>Herald</strong> console{{#signedIn}} · <a href="/send">Send</a> · <a href="/history">History</a> · <a href="/log">Delivery log</a> · <a href="/devices">Devices</a> · <a href="/channels">Channels</a> · <a href="/faults">Faults</a> · <a href="/metrics">Metrics</a> · <a href="/tools">Tools</a>
        <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Log out</button></form>{{/signedIn}}</header><main>
        """,
        "foot": "</main></body></html>\n",
        "card": """
        <div class="head"><span class="icon">{{initial}}</span><span class="app">{{app}}</span><span class="time">{{time}}</span></div>
        <div class="row"><div class="text">{{#title}}<div class="title">{{title}}</div>{{/title}}{{#subtitle}}<div class="subtitle">{{subtitle}}</div>{{/subtitle}}{{#body}}<div class="body">{{body}}</div>{{/body}}</div>
        """,
        "notification": """
        <div class="notification">
        <figure><div class="screen lock"><div class="card compact">{{> card}}{{#thumbnail}}<img class="thumbnail" src="{{thumbnail}}" alt="">{{/thumbnail}}</div></div></div><figcaption>Lock screen</figcaption></figure>
        <figure><div class="screen home"><div class="card compact banner">{{> card}}{{#thumbnail}}<img class="thumbnail" src="{{thumbnail}}" alt="">{{/thumbnail}}</div></div></div><figcaption>Banner</figcaption></figure>
        <figure><div class="screen expanded"><div class="card full">{{#images}}<img class="attachment" src="{{url}}" alt="{{identifier}}">{{/images}}{{> card}}</div></div>
        {{#others}}<div class="other">{{identifier}} ({{type}})</div>{{/others}}
        {{#hasActions}}<div class="actions">{{#actions}}<div class="action{{#destructive}} destructive{{/destructive}}">{{title}}</div>{{#textInput}}<div class="action text-input"><input type="text" placeholder="{{placeholder}}" disabled><button type="button" disabled>{{buttonTitle}}</button></div>{{/textInput}}{{/actions}}</div>{{/hasActions}}
        </div><figcaption>Expanded</figcaption></figure>
        </div>
        """,
        "login": """
        {{> head}}
        <h1>Log in</h1>
        {{#message}}<p class="error">{{message}}</p>{{/message}}
        <form method="post" action="/login">
        <label>Operator token <input type="password" name="token" autocomplete="off" autofocus></label>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Log in</button>
        </form>
        <p class="hint">An operator token comes from <code>herald console token</code> (and <code>herald up</code> prints one).</p>
        {{> foot}}
        """,
        "log": """
        {{> head}}
        <h1>Delivery log</h1>
        <form method="get" action="/log">
        <label>apns-unique-id, apns-id, device token or topic <input type="search" name="id" value="{{id}}" size="64"></label>
        <button type="submit">Search</button>
        </form>
        {{#listed}}
        <p>Notifications sent with this apns-id, to this token or channel, or on this topic, newest first{{#limited}} (the latest 50){{/limited}}:</p>
        <table id="matches"><thead><tr><th>Received (UTC)</th><th>State now</th><th>apns-id</th><th>Token or channel</th><th>Topic</th></tr></thead><tbody>
        {{#matches}}<tr class="{{kind}}"><td><a href="/log?id={{uniqueID}}">{{time}}</a></td><td>{{state}}</td><td><code>{{apnsID}}</code></td><td><code class="long">{{recipient}}</code></td><td>{{topic}}</td></tr>{{/matches}}
        </tbody></table>
        {{/listed}}
        {{#searched}}
        {{#subject}}<p class="subject">apns-unique-id <code>{{uniqueID}}</code> · apns-id <code>{{apnsID}}</code> · to <code class="long">{{recipient}}</code> · {{topic}}</p>{{/subject}}
        {{#drawing}}<section id="drawing"><p class="hint">{{#onDevice}}As the device shows it.{{/onDevice}}{{^onDevice}}As its payload reads (no device beside this console says what it showed).{{/onDevice}}</p>{{> notification}}</section>{{/drawing}}
        <table id="timeline" data-id="{{uniqueID}}" data-shown="{{count}}"{{^hasEvents}} hidden{{/hasEvents}}><thead><tr><th>Time (UTC)</th><th>State</th><th>Detail</th></tr></thead><tbody>
        {{#events}}<tr class="{{kind}}"><td>{{time}}</td><td>{{state}}</td><td>{{detail}}</td></tr>{{/events}}
        </tbody></table>
        {{^hasEvents}}<p id="nothing">No delivery log for <code>{{id}}</code> yet (kept 7 days); this page shows it as it comes.</p>{{/hasEvents}}
        {{/searched}}
        {{> foot}}
        """,
        "tools": """
        {{> head}}
        <h1>Tools</h1>
        <h2>JWT validator</h2>
        <form method="post" action="/tools/jwt"><input type="hidden" name="csrf" value="{{csrf}}">
        <label>Provider token <textarea name="jwt" rows="3" cols="80">{{jwt}}</textarea></label>
        <button type="submit">Validate</button></form>
        {{#hasChecks}}
        <table><thead><tr><th>Check</th><th>Result</th><th>Why</th></tr></thead><tbody>
        {{#checks}}<tr class="{{#passed}}delivered{{/passed}}{{^passed}}discarded{{/passed}}"><td>{{name}}</td><td>{{#passed}}passed{{/passed}}{{^passed}}failed{{/passed}}</td><td>{{detail}}</td></tr>{{/checks}}
        </tbody></table>
        <h3>Header</h3><pre>{{header}}</pre><h3>Claims</h3><pre>{{claims}}</pre>
        {{/hasChecks}}
        <h2>JWT generator</h2>
        {{#hasKeys}}
        <form method="post" action="/tools/generate"><input type="hidden" name="csrf" value="{{csrf}}">
        <label>Key <select name="key">{{#keys}}<option>{{id}}</option>{{/keys}}</select></label>
        <button type="submit">Generate</button></form>
        {{/hasKeys}}
        {{^hasKeys}}<p class="hint">No key to sign with: put its <code>.p8</code> in the data directory as <code>AuthKey_&lt;key ID&gt;.p8</code>.</p>{{/hasKeys}}
        {{#generateMessage}}<p class="error">{{generateMessage}}</p>{{/generateMessage}}
        {{#generated}}<p>A provider token signed now with <code>{{generatedKey}}</code> (APNs takes it for an hour):</p>
        <pre id="generated" class="long">{{generated}}</pre><h3>Header</h3><pre>{{generatedHeader}}</pre><h3>Claims</h3><pre>{{generatedClaims}}</pre>{{/generated}}
        <h2>Device token validator</h2>
        <form method="post" action="/tools/token"><input type="hidden" name="csrf" value="{{csrf}}">
        <label>Device token <input type="text" name="token" value="{{token}}" size="70"></label>
        <button type="submit">Look up</button></form>
        {{#hasFacts}}
        <table><tbody>{{#facts}}<tr><th>{{label}}</th><td>{{value}}</td></tr>{{/facts}}</tbody></table>
        {{/hasFacts}}
        {{> foot}}
        """,
        "faults": """
        {{> head}}
        <h1>Fault rules</h1>
        <p class="hint">Make the gateway's doors fail on demand, the way APNs, FCM and web push services do: each request the first matching rule hits is refused, limited by a quota, answered late, reset or cut off (docs/faults.md). The same rules as <code>/api/v1/faults</code> and <code>herald faults</code>.</p>
        {{#message}}<p class="error">{{message}}</p>{{/message}}
        {{#noGateway}}<p>No gateway runs beside this console: fault rules are the gateway's.</p>{{/noGateway}}
        {{^noGateway}}
        {{#hasRules}}
        <table><thead><tr><th>Rule</th><th>Door</th><th>Matches</th><th>Effect</th><th>How often</th><th>Hits</th><th></th></tr></thead><tbody>
        {{#rules}}<tr{{#spent}} class="spent"{{/spent}}><td><code>{{id}}</code></td><td>{{door}}</td><td><code>{{match}}</code></td><td><code>{{effect}}</code></td><td>{{often}}</td><td>{{hits}}{{#spent}} (spent){{/spent}}</td>
        <td><form method="post" action="/faults/delete"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="id" value="{{id}}"><button type="submit">Remove</button></form></td></tr>{{/rules}}
        </tbody></table>
        <form method="post" action="/faults/clear"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Remove all</button></form>
        {{/hasRules}}
        {{^hasRules}}<p>No fault rules: every push is handled as usual.</p>{{/hasRules}}
        <h2>Add a rule</h2>
        <form method="post" action="/faults"><input type="hidden" name="csrf" value="{{csrf}}">
        <label>Rule (JSON) <textarea name="rule" rows="4" cols="90">{{rule}}</textarea></label>
        <button type="submit">Add</button></form>
        {{/noGateway}}
        {{> foot}}
        """,
        "channels": """
        {{> head}}
        <h1>Broadcast channels</h1>
        <form method="get" action="/channels">
        <label>App <input type="text" name="app" value="{{app}}" size="30"></label>
        <label>Environment <select name="environment"><option value="development"{{#development}} selected{{/development}}>development</option><option value="production"{{^development}} selected{{/development}}>production</option></select></label>
        <label>Channel ID <input type="search" name="id" value="{{id}}" size="30"></label>
        <button type="submit">Show</button></form>
        {{#message}}<p class="error">{{message}}</p>{{/message}}
        {{#hasApp}}
        {{#hasChannels}}
        <table><thead><tr><th>Channel ID</th><th>Push type</th><th>Message storage policy</th><th>Created (UTC)</th><th></th></tr></thead><tbody>
        {{#channels}}<tr><td><code>{{id}}</code></td><td>{{pushType}}</td><td>{{policy}}</td><td>{{created}}</td>
        <td><form method="post" action="/channels/delete"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="app" value="{{app}}"><input type="hidden" name="environment" value="{{environment}}">
        <input type="hidden" name="id" value="{{id}}"><button type="submit">Delete</button></form></td></tr>{{/channels}}
        </tbody></table>
        {{/hasChannels}}
        {{^hasChannels}}<p>No channels{{#byID}} with this ID{{/byID}} for <code>{{app}}</code> in {{environment}}.</p>{{/hasChannels}}
        <h2>New channel</h2>
        <form method="post" action="/channels"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="app" value="{{app}}"><input type="hidden" name="environment" value="{{environment}}">
        <label><input type="radio" name="policy" value="0" checked> No message stored</label>
        <label><input type="radio" name="policy" value="1"> Most recent message stored</label>
        <button type="submit">Create</button></form>
        {{/hasApp}}
        {{> foot}}
        """,
        "send": """
        {{> head}}
        <h1>Send a notification</h1>
        {{#message}}<p class="error">{{message}}</p>{{/message}}
        {{#fromHistory}}<p class="hint">From the history: change what you like and send it again.</p>{{/fromHistory}}
        {{#result}}<table class="result"><tbody>
        <tr class="{{kind}}"><th>Status</th><td>{{status}} {{reason}}</td></tr>
        {{#apnsID}}<tr><th>apns-id</th><td><code>{{apnsID}}</code></td></tr>{{/apnsID}}
        {{#requestID}}<tr><th>apns-request-id</th><td><code>{{requestID}}</code></td></tr>{{/requestID}}
        {{#uniqueID}}<tr><th>apns-unique-id</th><td><a href="/log?id={{uniqueID}}"><code>{{uniqueID}}</code></a> (delivery log)</td></tr>{{/uniqueID}}
        </tbody></table>{{/result}}
        {{#curl}}<h2>cURL command</h2><pre id="curl">{{curl}}</pre>{{/curl}}
        {{#noKeys}}<p class="error">No provider key to send with: put its <code>.p8</code> in the data directory as <code>AuthKey_&lt;key ID&gt;.p8</code> (herald up keeps its key there).</p>{{/noKeys}}
        <form method="post" action="/send" id="send"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><label>Key <select name="key">{{#keys}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{id}}</option>{{/keys}}</select></label>
        <label>Environment <select name="environment"><option value="development">development</option><option value="production"{{#production}} selected{{/production}}>production</option></select></label></p>
        <p><label><input type="radio" name="target" value="token"{{^toChannel}} checked{{/toChannel}}> Device token</label>
        <label><input type="radio" name="target" value="channel"{{#toChannel}} checked{{/toChannel}}> Channel</label>
        <input type="text" name="recipient" value="{{recipient}}" size="66" placeholder="device token (hex) or channel ID"></p>
        <p><label>Bundle ID (apns-topic) <input type="text" name="topic" value="{{topic}}" size="30"></label>
        <label>apns-push-type <select name="pushType" id="pushType">{{#pushTypes}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/pushTypes}}</select></label>
        <label>apns-priority <select name="priority"><option value="">default</option><option{{#p10}} selected{{/p10}}>10</option><option{{#p5}} selected{{/p5}}>5</option><option{{#p1}} selected{{/p1}}>1</option></select></label></p>
        <p><label>apns-expiration <input type="text" name="expiration" value="{{expiration}}" size="12" placeholder="none, 0, or a UNIX time"></label>
        <label>apns-collapse-id <input type="text" name="collapseID" value="{{collapseID}}" size="20"></label></p>
        <fieldset id="composer"><legend>Compose (writes the payload below)</legend>
        <p data-types="alert"><label>Title <input type="text" data-key="title" size="30"></label>
        <label>Subtitle <input type="text" data-key="subtitle" size="20"></label></p>
        <p data-types="alert"><label>Body <input type="text" data-key="body" size="60"></label></p>
        <p data-types="alert"><label>Sound <input type="text" data-key="sound" size="12" placeholder="default"></label>
        <label>Badge <input type="number" data-key="badge" min="0" size="4"></label>
        <label>Category <input type="text" data-key="category" size="16"></label>
        <label><input type="checkbox" data-key="mutable-content"> mutable-content</label></p>
        <p data-types="background"><label>Custom data (JSON object, beside aps) <input type="text" data-key="custom" size="50" placeholder='{"news":"…"}'></label></p>
        <p data-types="liveactivity"><label>Event <select data-key="event"><option>update</option><option>end</option><option>start</option></select></label>
        <label>content-state (JSON) <input type="text" data-key="content-state" size="40" placeholder='{"score":1}'></label></p>
        <p data-types="liveactivity"><label>Alert title <input type="text" data-key="la-title" size="20"></label>
        <label>Alert body <input type="text" data-key="la-body" size="30"></label>
        <label>Attributes type (start) <input type="text" data-key="attributes-type" size="16"></label></p>
        <p data-types="voip location complication fileprovider mdm pushtotalk widgets controls"><span class="hint">This push type's payload is the app's own: write it below.</span></p>
        </fieldset>
        <p><label>Payload (JSON) <span id="size" data-limit="{{limit}}"></span><br>
        <textarea name="payload" id="payload" rows="8" cols="80">{{payload}}</textarea></label></p>
        <button type="submit" name="action" value="send">Send</button>
        <button type="submit" name="action" value="curl">Get cURL command</button>
        </form>
        {{#hasFCM}}
        <h2 id="fcm">Send an FCM message</h2>
        <p class="hint">Firebase Cloud Messaging's <code>messages:send</code> through the gateway's FCM port, as firebase-admin sends it: an access token for the project's service-account key (<code>fcm/&lt;project&gt;.json</code> in the data directory), then the request below, in Google's JSON (<code>"validate_only": true</code> for a dry run).</p>
        {{#fcmMessage}}<p class="error">{{fcmMessage}}</p>{{/fcmMessage}}
        {{#fcmResult}}<table class="result" id="fcmResult"><tbody>
        <tr class="{{kind}}"><th>Status</th><td>{{status}} {{reason}}</td></tr>
        {{#name}}<tr><th>name</th><td>{{#messageID}}<a href="/log?id={{messageID}}"><code>{{name}}</code></a> (delivery log){{/messageID}}{{^messageID}}<code>{{name}}</code>{{/messageID}}</td></tr>{{/name}}
        </tbody></table>{{/fcmResult}}
        {{#noFCMProjects}}<p class="error">No FCM project to send as: its key file belongs in the data directory as <code>fcm/&lt;project&gt;.json</code> (herald fcm project create and herald up write it there).</p>{{/noFCMProjects}}
        <form method="post" action="/send/fcm" id="sendFCM"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><label>Project <select name="fcmProject">{{#fcmProjects}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{id}}</option>{{/fcmProjects}}</select></label></p>
        <p><label>Request (JSON)<br><textarea name="fcmRequest" id="fcmRequest" rows="8" cols="80">{{fcmRequest}}</textarea></label></p>
        <button type="submit" name="action" value="send">Send through FCM</button>
        </form>
        {{/hasFCM}}
        {{#hasWebPush}}
        <h2 id="webpush">Send a web push</h2>
        <p class="hint">RFC 8030 to a subscription of the gateway's web push service, as pywebpush sends it: the message encrypted to the subscription's keys (RFC 8291, aes128gcm), signed with a VAPID key from the data directory's <code>webpush</code> folder. A Declarative Web Push message (<code>{"web_push":8030,"notification":{…}}</code>) is shown with no service worker.</p>
        {{#webPushMessageText}}<p class="error">{{webPushMessageText}}</p>{{/webPushMessageText}}
        {{#webPushResult}}<table class="result" id="webPushResult"><tbody>
        <tr class="{{kind}}"><th>Status</th><td>{{status}} {{reason}}</td></tr>
        {{#messageID}}<tr><th>Location</th><td><a href="/log?id={{messageID}}"><code>/m/{{messageID}}</code></a> (delivery log)</td></tr>{{/messageID}}
        </tbody></table>{{/webPushResult}}
        {{#noVAPIDKeys}}<p class="error">No VAPID key to sign with: put a P-256 private key (PEM) in the data directory's <code>webpush</code> folder (herald up keeps its demo web app's there).</p>{{/noVAPIDKeys}}
        <form method="post" action="/send/webpush" id="sendWebPush"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><label>Subscription (PushSubscription JSON)<br><textarea name="webPushSubscription" id="webPushSubscription" rows="5" cols="80">{{webPushSubscription}}</textarea></label></p>
        <p><label>VAPID key <select name="webPushKey">{{#vapidKeys}}<option value="{{name}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/vapidKeys}}</select></label>
        <label>sub <input name="webPushSubject" value="{{webPushSubject}}" size="30"></label></p>
        <p><label>TTL <input name="webPushTTL" value="{{webPushTTL}}" size="8"></label>
        <label>Urgency <select name="webPushUrgency">{{#urgencies}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/urgencies}}</select></label>
        <label>Topic <input name="webPushTopic" value="{{webPushTopic}}" size="32"></label></p>
        <p><label>Message<br><textarea name="webPushMessage" id="webPushMessage" rows="6" cols="80">{{webPushMessage}}</textarea></label></p>
        <button type="submit" name="action" value="send">Send web push</button>
        </form>
        {{/hasWebPush}}
        {{> foot}}
        """,
        "history": """
        {{> head}}
        <h1>History</h1>
        <p class="hint">What this console sent in the last 30 days, newest first. Modify opens one in the send form.</p>
        {{#message}}<p class="error">{{message}}</p>{{/message}}
        {{#hasSends}}
        <table id="history"><thead><tr><th>Sent (UTC)</th><th>To</th><th>Topic</th><th>Type</th><th>Answer</th><th></th></tr></thead><tbody>
        {{#sends}}<tr class="send"><td>{{time}}</td><td>{{target}} <code title="{{fullRecipient}}">{{recipient}}</code></td><td>{{topic}}</td><td>{{pushType}}</td>
        <td class="answer {{kind}}">{{status}} {{reason}}{{#uniqueID}} · <a href="/log?id={{uniqueID}}">log</a>{{/uniqueID}}</td>
        <td><a href="/send?from={{id}}">Modify</a>
        <form class="inline" method="post" action="/history/resend"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="id" value="{{id}}"><button type="submit">Send again</button></form></td></tr>{{/sends}}
        </tbody></table>
        {{/hasSends}}
        {{^hasSends}}<p>Nothing sent from this console in the last 30 days.</p>{{/hasSends}}
        {{> foot}}
        """,
        "devices": """
        {{> head}}
        <h1>Devices</h1>
        <p class="hint">{{#knowsConnections}}{{online}} connected to this gateway node now. {{/knowsConnections}}Every device with a token, connected or not, and how many notifications are kept for it (one per app and topic, until it connects).</p>
        {{#hasDevices}}
        {{#limited}}<p class="hint">The first {{shownCount}} of {{total}} devices, by ID.</p>{{/limited}}
        <table id="devices"><thead><tr><th>Device</th><th>Connected since (UTC)</th><th>Tokens</th><th>Kept</th></tr></thead><tbody>
        {{#devices}}<tr><td><code>{{id}}</code></td><td>{{#connectedAt}}{{connectedAt}} · {{channels}} channel(s){{/connectedAt}}{{^connectedAt}}offline{{/connectedAt}}</td>
        <td>{{#tokens}}<div>{{app}} ({{environment}}{{#purpose}}, {{purpose}}{{/purpose}}) <a href="/log?id={{token}}"><code class="long">{{token}}</code></a></div>{{/tokens}}</td>
        <td>{{#hasStored}}<a href="/devices?id={{id}}">{{stored}}</a>{{/hasStored}}{{^hasStored}}0{{/hasStored}}</td></tr>{{/devices}}
        </tbody></table>
        {{/hasDevices}}
        {{^hasDevices}}<p>No devices yet: one appears once it registers an app (or connects).</p>{{/hasDevices}}
        {{#shown}}<h2>Kept for <code>{{shown}}</code></h2>
        {{#hasKept}}<table id="kept"><thead><tr><th>Received (UTC)</th><th>Topic</th><th>Type</th><th>Expires (UTC)</th><th>Payload</th></tr></thead><tbody>
        {{#kept}}<tr><td><a href="/log?id={{uniqueID}}">{{received}}</a></td><td>{{topic}}</td><td>{{pushType}}</td><td>{{expires}}</td><td><code class="long">{{payload}}</code></td></tr>{{/kept}}
        </tbody></table>{{/hasKept}}
        {{^hasKept}}<p>Nothing is kept for this device.</p>{{/hasKept}}
        {{/shown}}
        {{#onDevice}}<h2>On this device</h2>
        <p class="hint">The notifications in Notification Center on the device beside this console, each app's newest first{{#limitedApps}} (each app's latest {{perApp}}){{/limitedApps}}, drawn as the person sees them.</p>
        {{#apps}}<h3><code>{{bundleID}}</code></h3>{{#notifications}}{{> notification}}{{/notifications}}{{^notifications}}<p>Nothing delivered.</p>{{/notifications}}{{/apps}}
        {{^apps}}<p>No app has used notifications yet.</p>{{/apps}}
        {{/onDevice}}
        {{> foot}}
        """,
        "metrics": """
        {{> head}}
        <h1>Metrics</h1>
        <p class="ranges">{{#ranges}}{{#current}}<strong>{{name}}</strong>{{/current}}{{^current}}<a href="/metrics?range={{name}}">{{name}}</a>{{/current}} {{/ranges}}</p>
        <p class="hint">The delivery log counted by Apple's categories (the Push Notifications Console's), in UTC.</p>
        {{#hasSeries}}{{#charts}}<section class="chart"><h2>{{name}} <span class="hint">{{total}}</span></h2>{{{svg}}}</section>{{/charts}}{{/hasSeries}}
        {{^hasSeries}}<p>Nothing in the delivery log for this {{range}}.</p>{{/hasSeries}}
        {{> foot}}
        """,
        "error": """
        {{> head}}
        <h1>{{title}}</h1><p>{{message}}</p>
        {{> foot}}
        """,
    ]

    /// The console's one script: the delivery log's timeline, kept current with Server-Sent Events (`/log/events`).
    /// Rows are made with `textContent`: nothing the gateway recorded is ever read as HTML.
    static let script = """
        "use strict";
        document.addEventListener("DOMContentLoaded", () => {
          // The send form: the payload's size against the push type's limit, counted as it is typed.
          const payload = document.getElementById("payload");
          const size = document.getElementById("size");
          const pushType = document.getElementById("pushType");
          if (payload && size) {
            const count = () => {
              const limit = (pushType && pushType.value === "voip") || document.querySelector("input[name=target][value=channel]:checked") ? 5120 : 4096;
              const bytes = new TextEncoder().encode(payload.value).length;
              size.textContent = bytes + " / " + limit + " bytes";
              size.className = bytes > limit ? "error" : "hint";
            };
            payload.addEventListener("input", count);
            if (pushType) pushType.addEventListener("change", count);
            for (const radio of document.querySelectorAll("input[name=target]")) radio.addEventListener("change", count);
            count();
          }
          // The composer: fields for the chosen push type, written into the payload as the person types.
          const composer = document.getElementById("composer");
          if (composer && payload && pushType) {
            const field = (key) => composer.querySelector("[data-key='" + key + "']");
            const value = (key) => { const f = field(key); return f ? (f.type === "checkbox" ? f.checked : f.value.trim()) : ""; };
            const json = (text) => { try { const v = JSON.parse(text); return typeof v === "object" && v ? v : null; } catch (e) { return null; } };
            const show = () => {
              for (const part of composer.querySelectorAll("[data-types]")) {
                part.hidden = !part.dataset.types.split(" ").includes(pushType.value);
              }
            };
            const write = () => {
              let body = null;
              if (pushType.value === "alert") {
                const alert = {};
                for (const key of ["title", "subtitle", "body"]) if (value(key)) alert[key] = value(key);
                const aps = { alert: alert };
                if (value("sound")) aps.sound = value("sound");
                if (value("badge") !== "") aps.badge = Number(value("badge"));
                if (value("category")) aps.category = value("category");
                if (value("mutable-content")) aps["mutable-content"] = 1;
                body = { aps: aps };
              } else if (pushType.value === "background") {
                body = Object.assign({}, json(value("custom")) || {}, { aps: { "content-available": 1 } });
              } else if (pushType.value === "liveactivity") {
                const aps = { timestamp: Math.floor(Date.now() / 1000), event: value("event") || "update",
                              "content-state": json(value("content-state")) || {} };
                if (value("la-title") || value("la-body")) aps.alert = { title: value("la-title"), body: value("la-body") };
                if (aps.event === "start" && value("attributes-type")) { aps["attributes-type"] = value("attributes-type"); aps.attributes = {}; }
                if (aps.event === "end") aps["dismissal-date"] = aps.timestamp;
                body = { aps: aps };
              }
              if (body) { payload.value = JSON.stringify(body); payload.dispatchEvent(new Event("input")); }
            };
            for (const input of composer.querySelectorAll("[data-key]")) input.addEventListener("input", write);
            pushType.addEventListener("change", show);
            show();
          }
          const table = document.getElementById("timeline");
          if (!table || !window.EventSource) return;
          let skip = Number(table.dataset.shown || "0");
          const source = new EventSource("/log/events?id=" + encodeURIComponent(table.dataset.id));
          source.addEventListener("state", (message) => {
            if (skip > 0) { skip -= 1; return; }
            const event = JSON.parse(message.data);
            const row = document.createElement("tr");
            row.className = event.kind;
            for (const text of [event.time, event.state, event.detail]) {
              const cell = document.createElement("td");
              cell.textContent = text;
              row.appendChild(cell);
            }
            table.tBodies[0].appendChild(row);
            table.hidden = false;
            const nothing = document.getElementById("nothing");
            if (nothing) nothing.remove();
          });
        });
        """

    static let stylesheet = """
        body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f5f5f7; }
        header { background: #1d1d1f; color: #f5f5f7; padding: 0.6em 1.5em; }
        header a { color: #8ab4f8; }
        main { padding: 1.5em; max-width: 60em; }
        form.inline { display: inline; margin-left: 1em; }
        table { border-collapse: collapse; width: 100%; background: white; }
        th, td { text-align: left; padding: 0.4em 0.8em; border-bottom: 1px solid #ddd; vertical-align: top; }
        tr.delivered td:nth-child(2) { color: #137333; font-weight: 600; }
        tr.discarded td:nth-child(2) { color: #b3261e; font-weight: 600; }
        tr.stored td:nth-child(2) { color: #8a5a00; }
        .error { color: #b3261e; }
        td.answer.delivered { color: #137333; font-weight: 600; }
        td.answer.discarded { color: #b3261e; font-weight: 600; }
        code.long { word-break: break-all; }
        fieldset { border: 1px solid #ddd; background: white; margin: 0 0 1em; }
        svg.chart { background: white; display: block; }
        svg.chart rect { fill: #0071e3; }
        svg.chart line.axis { stroke: #999; }
        svg.chart text.label { fill: #666; font-size: 10px; }
        section.chart h2 { font-size: 1em; margin: 1.2em 0 0.3em; }
        .hint { color: #666; }
        input, button { font: inherit; }
        .notification { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; margin: 0.6em 0 1.4em; }
        .notification figure { margin: 0; }
        .notification figcaption { color: #666; font-size: 13px; margin-top: 0.3em; }
        .screen { width: 359px; padding: 10px; border-radius: 14px; }
        .screen.lock { background: linear-gradient(160deg, #2c3e66, #141a2b); }
        .screen.home { background: linear-gradient(160deg, #9fb8d9, #d9e4f2); }
        .screen.expanded { background: #3a3a3c; }
        .card { box-sizing: border-box; width: 359px; padding: 11px 14px 12px; border-radius: 20px;
          background: rgba(246, 246, 248, 0.94); font: 15px/20px system-ui, sans-serif; color: #1d1d1f; }
        .card .head { display: flex; gap: 8px; align-items: center; font-size: 13px; line-height: 18px; color: #6e6e73; margin-bottom: 2px; }
        .card .icon { flex: none; width: 20px; height: 20px; border-radius: 5px; background: #0071e3; color: white;
          text-align: center; font-size: 12px; line-height: 20px; font-weight: 600; }
        .card .app { flex: 1; min-width: 0; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
        .card .time { flex: none; }
        .card .row { display: flex; gap: 10px; align-items: flex-start; }
        .card .text { flex: 1; min-width: 0; }
        .card .title, .card .subtitle { font-weight: 600; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
        .card .body { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 4; overflow: hidden;
          white-space: pre-line; overflow-wrap: anywhere; }
        .card.full .title, .card.full .subtitle { white-space: normal; overflow-wrap: anywhere; }
        .card.full .body { display: block; -webkit-line-clamp: unset; }
        .card .thumbnail { flex: none; width: 38px; height: 38px; object-fit: cover; border-radius: 7px; }
        .card .attachment { display: block; width: calc(100% + 28px); max-height: 220px; object-fit: cover;
          margin: -11px -14px 10px; border-radius: 20px 20px 0 0; }
        .screen .other { color: #f5f5f7; font-size: 13px; margin-top: 6px; }
        .actions { width: 359px; margin-top: 8px; border-radius: 14px; background: rgba(246, 246, 248, 0.94);
          font: 17px/22px system-ui, sans-serif; }
        .action { padding: 11px 16px; border-top: 1px solid #d2d2d7; color: #1d1d1f; }
        .action:first-child { border-top: 0; }
        .action.destructive { color: #d70015; }
        .action.text-input { display: flex; gap: 8px; background: #ececf0; border-radius: 0 0 14px 14px; }
        .action.text-input input { flex: 1; border: 1px solid #c7c7cc; border-radius: 16px; padding: 4px 12px; background: white; }
        .action.text-input button { border: 0; background: none; color: #0071e3; font-weight: 600; }
        """

    /// A page rendered with `values` (each escaped where the template shows it).
    static func render(_ name: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: name) ?? ""
    }
}
