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
            <header><strong>Herald</strong> console{{#signedIn}} · <a href="/send">Send</a> · <a href="/log">Delivery log</a> · <a href="/channels">Channels</a> · <a href="/tools">Tools</a>
            <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit">Log out</button></form>{{/signedIn}}</header><main>
            """,
        "foot": "</main></body></html>\n",
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
            <label>apns-unique-id <input type="search" name="id" value="{{id}}" size="40"></label>
            <button type="submit">Search</button>
            </form>
            {{#searched}}
            <table id="timeline" data-id="{{id}}" data-shown="{{count}}"{{^hasEvents}} hidden{{/hasEvents}}><thead><tr><th>Time (UTC)</th><th>State</th><th>Detail</th></tr></thead><tbody>
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
            <h2>Device token validator</h2>
            <form method="post" action="/tools/token"><input type="hidden" name="csrf" value="{{csrf}}">
            <label>Device token <input type="text" name="token" value="{{token}}" size="70"></label>
            <button type="submit">Look up</button></form>
            {{#hasFacts}}
            <table><tbody>{{#facts}}<tr><th>{{label}}</th><td>{{value}}</td></tr>{{/facts}}</tbody></table>
            {{/hasFacts}}
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
            {{#result}}<table class="result"><tbody>
            <tr class="{{kind}}"><th>Status</th><td>{{status}} {{reason}}</td></tr>
            {{#apnsID}}<tr><th>apns-id</th><td><code>{{apnsID}}</code></td></tr>{{/apnsID}}
            {{#requestID}}<tr><th>apns-request-id</th><td><code>{{requestID}}</code></td></tr>{{/requestID}}
            {{#uniqueID}}<tr><th>apns-unique-id</th><td><a href="/log?id={{uniqueID}}"><code>{{uniqueID}}</code></a> (delivery log)</td></tr>{{/uniqueID}}
            </tbody></table>{{/result}}
            {{#curl}}<h2>cURL command</h2><pre id="curl">{{curl}}</pre>{{/curl}}
            {{#noKeys}}<p class="error">No provider key to send with: put its <code>.p8</code> in the data directory as <code>AuthKey_&lt;key ID&gt;.p8</code> (herald up keeps its key there).</p>{{/noKeys}}
            <form method="post" action="/send" id="send"><input type="hidden" name="csrf" value="{{csrf}}">
            <p><label>Key <select name="key">{{#keys}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{id}}</option>{{/keys}}</select></label></p>
            <p><label><input type="radio" name="target" value="token"{{^toChannel}} checked{{/toChannel}}> Device token</label>
            <label><input type="radio" name="target" value="channel"{{#toChannel}} checked{{/toChannel}}> Channel</label>
            <input type="text" name="recipient" value="{{recipient}}" size="66" placeholder="device token (hex) or channel ID"></p>
            <p><label>Bundle ID (apns-topic) <input type="text" name="topic" value="{{topic}}" size="30"></label>
            <label>apns-push-type <select name="pushType" id="pushType">{{#pushTypes}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/pushTypes}}</select></label>
            <label>apns-priority <select name="priority"><option value="">default</option><option{{#p10}} selected{{/p10}}>10</option><option{{#p5}} selected{{/p5}}>5</option><option{{#p1}} selected{{/p1}}>1</option></select></label></p>
            <p><label>apns-expiration <input type="text" name="expiration" value="{{expiration}}" size="12" placeholder="none, 0, or a UNIX time"></label>
            <label>apns-collapse-id <input type="text" name="collapseID" value="{{collapseID}}" size="20"></label></p>
            <p><label>Payload (JSON) <span id="size" data-limit="{{limit}}"></span><br>
            <textarea name="payload" id="payload" rows="8" cols="80">{{payload}}</textarea></label></p>
            <button type="submit" name="action" value="send">Send</button>
            <button type="submit" name="action" value="curl">Get cURL command</button>
            </form>
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
        .hint { color: #666; }
        input, button { font: inherit; }
        """

    /// A page rendered with `values` (each escaped where the template shows it).
    static func render(_ name: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: name) ?? ""
    }
}
