/// The test-bed API's contract, OpenAPI 3.1 (`GET /api/v1/openapi.json`). Tests check every answer against it.
enum TestBedAPIDocument {
    /// The document, JSON.
    static let json = #"""
        {
          "openapi": "3.1.0",
          "info": {
            "title": "Herald test-bed API",
            "version": "1",
            "description": "What Herald's gateway did with each push, and what the device beside it (herald up's) did, for a test suite in any language: list, wait for, and remove deliveries and notifications. Authenticate with an operator token (herald console token) as a bearer token. Every answer, errors too, is JSON."
          },
          "security": [{"operatorToken": []}],
          "paths": {
            "/api/v1/faults": {
              "get": {
                "operationId": "listFaults",
                "summary": "The fault rules, in the order they apply, each with its hits.",
                "responses": {
                  "200": {"description": "The rules.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FaultListing"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              },
              "post": {
                "operationId": "addFault",
                "summary": "Adds a fault rule after the others: the first rule that matches a request decides what happens to it.",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FaultRuleRequest"}}}},
                "responses": {
                  "201": {"description": "The rule as stored: its id, every default written out, its seed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FaultRule"}}}},
                  "400": {"description": "A field is unknown or not valid; field names it.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              },
              "delete": {
                "operationId": "deleteFaults",
                "summary": "Removes every fault rule.",
                "responses": {
                  "200": {"description": "How many went.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deleted"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/v1/faults/{id}": {
              "delete": {
                "operationId": "deleteFault",
                "summary": "Removes one fault rule.",
                "parameters": [{"name": "id", "in": "path", "required": true, "description": "The rule's id (fault-1, …).", "schema": {"type": "string"}}],
                "responses": {
                  "200": {"description": "It went.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deleted"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/v1/status": {
              "get": {
                "operationId": "getStatus",
                "summary": "Whether the sandbox is ready, and what it is made of (herald up's banner); with wait, once it is ready or at the timeout.",
                "parameters": [
                  {"name": "wait", "in": "query", "description": "Seconds to wait for the sandbox to be ready (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}}
                ],
                "responses": {
                  "200": {"description": "The status.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"}
                }
              }
            },
            "/api/v1/deliveries": {
              "get": {
                "operationId": "listDeliveries",
                "summary": "The pushes the gateway received, oldest first; with wait, once min of them match or at the timeout.",
                "parameters": [
                  {"$ref": "#/components/parameters/token"}, {"$ref": "#/components/parameters/topic"},
                  {"$ref": "#/components/parameters/door"}, {"$ref": "#/components/parameters/pushType"},
                  {"$ref": "#/components/parameters/collapseID"}, {"$ref": "#/components/parameters/state"},
                  {"$ref": "#/components/parameters/since"},
                  {"name": "limit", "in": "query", "description": "At most this many (default 100).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "wait", "in": "query", "description": "Seconds to wait for min deliveries to match (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}},
                  {"name": "min", "in": "query", "description": "How many must match before a wait answers (default 1).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                  "200": {"description": "The deliveries; complete is false when a wait ran out before min matched.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeliveryListing"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              },
              "delete": {
                "operationId": "deleteDeliveries",
                "summary": "Removes the deliveries the filters match (every one without a filter), with their events.",
                "parameters": [
                  {"$ref": "#/components/parameters/token"}, {"$ref": "#/components/parameters/topic"},
                  {"$ref": "#/components/parameters/door"}, {"$ref": "#/components/parameters/pushType"},
                  {"$ref": "#/components/parameters/collapseID"}, {"$ref": "#/components/parameters/state"},
                  {"$ref": "#/components/parameters/since"}
                ],
                "responses": {
                  "200": {"description": "How many went.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deleted"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/v1/deliveries/{uniqueID}": {
              "get": {
                "operationId": "getDelivery",
                "summary": "One delivery, by its apns-unique-id.",
                "parameters": [{"name": "uniqueID", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {
                  "200": {"description": "The delivery.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Delivery"}}}},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"}
                }
              }
            },
            "/api/v1/events": {
              "get": {
                "operationId": "streamEvents",
                "summary": "Server-Sent Events: each delivery-log event as the gateway writes it (id: its sequence, event: its kind, data: a StreamEvent), from now on, or after Last-Event-ID; beside herald up's device, each change of what it shows, with no id (event: notification, notificationRemoved, activity, widget or appPush; data: the entry as its listing writes it; topic keeps one app's, a token, door, pushType or collapseID filter none); a comment every 15 s of silence.",
                "parameters": [
                  {"$ref": "#/components/parameters/token"}, {"$ref": "#/components/parameters/topic"},
                  {"$ref": "#/components/parameters/door"}, {"$ref": "#/components/parameters/pushType"},
                  {"$ref": "#/components/parameters/collapseID"},
                  {"name": "Last-Event-ID", "in": "header", "description": "Resume after the event with this id (a sequence the stream sent).", "schema": {"type": "integer", "minimum": 0}}
                ],
                "responses": {
                  "200": {"description": "The stream; each event's data is a StreamEvent.", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/v1/notifications": {
              "get": {
                "operationId": "listNotifications",
                "summary": "The notifications on herald up's device, as each app's UNUserNotificationCenter lists them: app by app in bundle ID order, each app's in Apple's order (delivered: most recent first; pending: as added); with wait, once min of them match or at the timeout.",
                "parameters": [
                  {"$ref": "#/components/parameters/bundle"}, {"$ref": "#/components/parameters/notificationState"},
                  {"$ref": "#/components/parameters/identifier"}, {"$ref": "#/components/parameters/threadIdentifier"},
                  {"$ref": "#/components/parameters/categoryIdentifier"}, {"$ref": "#/components/parameters/notificationUniqueID"},
                  {"$ref": "#/components/parameters/presented"},
                  {"name": "limit", "in": "query", "description": "At most this many (default 100).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "wait", "in": "query", "description": "Seconds to wait for min notifications to match (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}},
                  {"name": "min", "in": "query", "description": "How many must match before a wait answers (default 1).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                  "200": {"description": "The notifications; complete is false when a wait ran out before min matched.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotificationListing"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              },
              "delete": {
                "operationId": "deleteNotifications",
                "summary": "Removes the notifications the filters match (every delivered one without a filter), as removeDeliveredNotifications and removePendingNotificationRequests do.",
                "parameters": [
                  {"$ref": "#/components/parameters/bundle"}, {"$ref": "#/components/parameters/notificationState"},
                  {"$ref": "#/components/parameters/identifier"}, {"$ref": "#/components/parameters/threadIdentifier"},
                  {"$ref": "#/components/parameters/categoryIdentifier"}, {"$ref": "#/components/parameters/notificationUniqueID"},
                  {"$ref": "#/components/parameters/presented"}
                ],
                "responses": {
                  "200": {"description": "How many went.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Deleted"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/v1/activities": {
              "get": {
                "operationId": "listActivities",
                "summary": "The Live Activities on herald up's device, every app's, oldest first, as ActivityKit's Activity gives them (ended and dismissed ones too); with wait, once min of them match or at the timeout.",
                "parameters": [
                  {"name": "bundle", "in": "query", "description": "The app's bundle ID; every app's without it.", "schema": {"type": "string", "minLength": 1}},
                  {"name": "id", "in": "query", "description": "Activity.id.", "schema": {"type": "string"}},
                  {"name": "attributesType", "in": "query", "description": "The ActivityAttributes type's name (a push-to-start push's attributes-type).", "schema": {"type": "string"}},
                  {"name": "activityState", "in": "query", "description": "ActivityKit's activityState.", "schema": {"$ref": "#/components/schemas/ActivityState"}},
                  {"name": "limit", "in": "query", "description": "At most this many (default 100).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "wait", "in": "query", "description": "Seconds to wait for min activities to match (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}},
                  {"name": "min", "in": "query", "description": "How many must match before a wait answers (default 1).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                  "200": {"description": "The activities; complete is false when a wait ran out before min matched.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ActivityListing"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/v1/widgets": {
              "get": {
                "operationId": "listWidgets",
                "summary": "The widgets and controls the apps on herald up's device declared, by app and kind, each with the timeline its provider last gave (WidgetKit); with wait, once min of them match or at the timeout.",
                "parameters": [
                  {"name": "bundle", "in": "query", "description": "The app's bundle ID; every app's without it.", "schema": {"type": "string", "minLength": 1}},
                  {"name": "kind", "in": "query", "description": "The widget's or control's kind.", "schema": {"type": "string"}},
                  {"name": "isControl", "in": "query", "description": "Only controls (true) or only widgets (false).", "schema": {"type": "string", "enum": ["true", "false"]}},
                  {"name": "reloadPending", "in": "query", "description": "Only those with a reload asked for (by a widgets or controls push, or the app) and not yet answered (true), or none waiting (false).", "schema": {"type": "string", "enum": ["true", "false"]}},
                  {"name": "reloadedSince", "in": "query", "description": "Only those whose provider gave a timeline at or after this RFC 3339 time: wait with it for the reload a push asked for.", "schema": {"type": "string"}},
                  {"name": "limit", "in": "query", "description": "At most this many (default 100).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "wait", "in": "query", "description": "Seconds to wait for min widgets to match (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}},
                  {"name": "min", "in": "query", "description": "How many must match before a wait answers (default 1).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                  "200": {"description": "The widgets; complete is false when a wait ran out before min matched.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WidgetListing"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            },
            "/api/v1/app-pushes": {
              "get": {
                "operationId": "listAppPushes",
                "summary": "The pushes herald up's device handed to something other than Notification Center, oldest first: background pushes to the app's application(_:didReceiveRemoteNotification:fetchCompletionHandler:), VoIP pushes to its PKPushRegistry delegate, web push messages to their web app; each with what became of it. With wait, once min of them match or at the timeout.",
                "parameters": [
                  {"name": "bundle", "in": "query", "description": "The app's bundle ID (a web app's: webapp.<host>); every app's without it.", "schema": {"type": "string", "minLength": 1}},
                  {"name": "kind", "in": "query", "description": "Only background pushes, VoIP pushes or web push messages.", "schema": {"type": "string", "enum": ["background", "voip", "webpush"]}},
                  {"name": "state", "in": "query", "description": "Only those in this state: waiting (kept until the app runs), running (background: the handler has not called its completion yet), handled, notHandled (no handler, or no completion in time), replaced (background: a newer one came before the app took it), shown, dropped (webpush).", "schema": {"type": "string", "enum": ["waiting", "running", "handled", "notHandled", "replaced", "shown", "dropped"]}},
                  {"name": "uniqueID", "in": "query", "description": "Only the push with this apns-unique-id.", "schema": {"type": "string"}},
                  {"name": "limit", "in": "query", "description": "At most this many (default 100).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "wait", "in": "query", "description": "Seconds to wait for min pushes to match (at most 60).", "schema": {"type": "number", "minimum": 0, "maximum": 60}},
                  {"name": "min", "in": "query", "description": "How many must match before a wait answers (default 1).", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}
                ],
                "responses": {
                  "200": {"description": "The pushes; complete is false when a wait ran out before min matched.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AppPushListing"}}}},
                  "400": {"$ref": "#/components/responses/BadRequest"},
                  "401": {"$ref": "#/components/responses/Unauthorized"},
                  "404": {"$ref": "#/components/responses/NotFound"},
                  "503": {"$ref": "#/components/responses/Unavailable"}
                }
              }
            }
          },
          "components": {
            "securitySchemes": {
              "operatorToken": {"type": "http", "scheme": "bearer", "description": "An operator token: herald console token, the one herald up prints, or the one herald up was given in HERALD_OPERATOR_TOKEN."}
            },
            "parameters": {
              "token": {"name": "token", "in": "query", "description": "The device token (or a broadcast's channel ID) it was sent to.", "schema": {"type": "string"}},
              "topic": {"name": "topic", "in": "query", "description": "The apns-topic.", "schema": {"type": "string"}},
              "door": {"name": "door", "in": "query", "description": "The door it came in by.", "schema": {"$ref": "#/components/schemas/Door"}},
              "pushType": {"name": "pushType", "in": "query", "description": "The apns-push-type.", "schema": {"type": "string"}},
              "collapseID": {"name": "collapseID", "in": "query", "description": "The apns-collapse-id.", "schema": {"type": "string"}},
              "state": {"name": "state", "in": "query", "description": "Apple's name of its latest state, as herald log prints it (Delivered to Device, Stored - Device Offline, …).", "schema": {"type": "string"}},
              "since": {"name": "since", "in": "query", "description": "Received at or after this RFC 3339 time, or after the delivery with this apns-unique-id.", "schema": {"type": "string"}},
              "bundle": {"name": "bundle", "in": "query", "description": "The app's bundle ID (404 when no app with it has used notifications on the device); every app's without it.", "schema": {"type": "string", "minLength": 1}},
              "notificationState": {"name": "state", "in": "query", "description": "Which list: delivered (Notification Center, the default) or pending (local requests waiting for their trigger).", "schema": {"type": "string", "enum": ["delivered", "pending"]}},
              "identifier": {"name": "identifier", "in": "query", "description": "The request's identifier: for a push, its apns-collapse-id, else its apns-id.", "schema": {"type": "string"}},
              "threadIdentifier": {"name": "threadIdentifier", "in": "query", "description": "content.threadIdentifier.", "schema": {"type": "string"}},
              "presented": {"name": "presented", "in": "query", "description": "Only delivered notifications the person has (true) or has not yet (false) been shown.", "schema": {"type": "string", "enum": ["true", "false"]}},
              "notificationUniqueID": {"name": "uniqueID", "in": "query", "description": "The push's apns-unique-id: the app's notification for one push in the delivery log.", "schema": {"type": "string"}},
              "categoryIdentifier": {"name": "categoryIdentifier", "in": "query", "description": "content.categoryIdentifier.", "schema": {"type": "string"}}
            },
            "responses": {
              "BadRequest": {"description": "A parameter is unknown, repeated or malformed; parameter names it.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Unauthorized": {"description": "No operator token, or one unknown, revoked or older than 30 days.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "NotFound": {"description": "Nothing by that name.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "Unavailable": {"description": "The gateway's store is unavailable, or too many waits are open.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            },
            "schemas": {
              "Error": {
                "type": "object", "required": ["error"], "additionalProperties": false,
                "properties": {"error": {"type": "string"}, "parameter": {"type": "string"}, "field": {"type": "string", "description": "For a fault rule: the field at fault (effect.status, probability, …)."}}
              },
              "FaultMatch": {
                "type": "object", "additionalProperties": false,
                "description": "Every field given must equal the request's; none matches every request of the door.",
                "properties": {
                  "token": {"type": "string", "minLength": 1}, "topic": {"type": "string", "minLength": 1},
                  "pushType": {"type": "string", "minLength": 1}, "bundle": {"type": "string", "minLength": 1},
                  "path": {"type": "string", "minLength": 1}
                }
              },
              "FaultEffect": {
                "description": "A refusal as the door's service sends it (status with APNs's or web push's reason, FCM's errorCode; timestamp, in milliseconds, for APNs's 410 only; retryAfter adds Retry-After); a late answer (delay in seconds, or a range drawn from the rule's seed); a stream reset (rstStream: an HTTP/2 error code; apns and fcm); a GOAWAY before the request's stream (goaway: an APNs reason for its data; apns); the connection closed unanswered (close); a new connection closed before SETTINGS (closeBeforeSettings; apns); a quota (requests per window of per seconds, counted by token, topic, connection (apns) or all: past it, the door's 429 with Retry-After).",
                "oneOf": [
                  {"type": "object", "additionalProperties": false, "required": ["rstStream"], "properties": {"rstStream": {"type": "string", "enum": ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]}}},
                  {"type": "object", "additionalProperties": false, "required": ["goaway"], "properties": {"goaway": {"type": "string"}}},
                  {"type": "object", "additionalProperties": false, "required": ["close"], "properties": {"close": {"const": true}}},
                  {"type": "object", "additionalProperties": false, "required": ["closeBeforeSettings"], "properties": {"closeBeforeSettings": {"const": true}}},
                  {
                    "type": "object", "additionalProperties": false, "required": ["quota"],
                    "properties": {
                      "quota": {
                        "type": "object", "additionalProperties": false, "required": ["requests", "per"],
                        "properties": {
                          "requests": {"type": "integer", "minimum": 1}, "per": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400},
                          "by": {"type": "string", "enum": ["token", "topic", "connection", "all"], "default": "token"}
                        }
                      }
                    }
                  },
                  {
                    "type": "object", "additionalProperties": false, "minProperties": 1,
                    "properties": {
                      "status": {"type": "integer"}, "reason": {"type": "string"}, "errorCode": {"type": "string"},
                      "timestamp": {"type": "integer", "minimum": 0}, "retryAfter": {"type": "integer", "minimum": 0}
                    }
                  },
                  {
                    "type": "object", "additionalProperties": false, "required": ["delay"],
                    "properties": {
                      "delay": {
                        "oneOf": [
                          {"type": "number", "minimum": 0, "maximum": 300},
                          {
                            "type": "object", "additionalProperties": false, "required": ["min", "max"],
                            "properties": {"min": {"type": "number", "minimum": 0, "maximum": 300}, "max": {"type": "number", "minimum": 0, "maximum": 300}}
                          }
                        ]
                      }
                    }
                  }
                ]
              },
              "FaultRuleRequest": {
                "type": "object", "additionalProperties": false, "required": ["door", "effect"],
                "properties": {
                  "door": {"$ref": "#/components/schemas/Door"},
                  "match": {"$ref": "#/components/schemas/FaultMatch"},
                  "effect": {"$ref": "#/components/schemas/FaultEffect"},
                  "times": {"type": ["integer", "null"], "minimum": 1, "description": "Hits before the rule is spent; default: no limit."},
                  "after": {"type": "integer", "minimum": 0, "description": "Matching requests that pass before the first hit; default 0."},
                  "probability": {"type": "number", "minimum": 0, "maximum": 1, "description": "The chance a matching request is hit; default 1."},
                  "seed": {"type": "integer", "minimum": 0, "description": "The seed of the rule's draws; default: chosen at random and reported."},
                  "ttl": {"type": ["number", "null"], "exclusiveMinimum": 0, "description": "Seconds until the rule removes itself; default: never."}
                }
              },
              "FaultRule": {
                "type": "object", "additionalProperties": false,
                "required": ["id", "door", "match", "effect", "times", "after", "probability", "seed", "ttl", "addedAt", "hits", "spent"],
                "properties": {
                  "id": {"type": "string"}, "door": {"$ref": "#/components/schemas/Door"},
                  "match": {"$ref": "#/components/schemas/FaultMatch"}, "effect": {"$ref": "#/components/schemas/FaultEffect"},
                  "times": {"type": ["integer", "null"]}, "after": {"type": "integer"}, "probability": {"type": "number"},
                  "seed": {"type": "integer"}, "ttl": {"type": ["number", "null"]},
                  "addedAt": {"type": "string", "format": "date-time"}, "expiresAt": {"type": "string", "format": "date-time"},
                  "hits": {"type": "integer", "description": "Requests it has hit."},
                  "spent": {"type": "boolean", "description": "Whether it has hit times requests (it then matches none)."}
                }
              },
              "FaultListing": {
                "type": "object", "additionalProperties": false, "required": ["faults"],
                "properties": {"faults": {"type": "array", "items": {"$ref": "#/components/schemas/FaultRule"}}}
              },
              "Door": {"type": "string", "enum": ["apns", "fcm", "webpush"]},
              "Status": {
                "type": "object", "required": ["ready"],
                "properties": {
                  "ready": {"type": "boolean"},
                  "dataDirectory": {"type": "string"},
                  "apns": {
                    "type": "object", "required": ["url", "plaintextURL", "channelsURL", "certificateAuthority", "keyID", "teamID", "keyFile"],
                    "properties": {
                      "url": {"type": "string"}, "plaintextURL": {"type": "string"}, "channelsURL": {"type": "string"},
                      "certificateAuthority": {"type": ["string", "null"]}, "keyID": {"type": "string"}, "teamID": {"type": "string"},
                      "keyFile": {"type": "string"}
                    }
                  },
                  "devices": {"type": "string"},
                  "demoApp": {
                    "type": "object", "required": ["bundleID", "deviceToken", "channel"],
                    "properties": {
                      "bundleID": {"type": "string"}, "deviceToken": {"type": ["string", "null"]}, "channel": {"type": ["string", "null"]}
                    }
                  },
                  "fcm": {
                    "type": ["object", "null"],
                    "properties": {
                      "proxy": {"type": "string"}, "project": {"type": "string"}, "credentials": {"type": "string"},
                      "token": {"type": ["string", "null"]}
                    }
                  },
                  "webPush": {
                    "type": ["object", "null"],
                    "properties": {"subscriptionFile": {"type": "string"}, "vapidKeyFile": {"type": "string"}, "origin": {"type": "string"}}
                  },
                  "deviceModel": {"type": "string"}
                }
              },
              "DeliveryEvent": {
                "type": "object", "required": ["state", "at", "kind", "detail"], "additionalProperties": false,
                "properties": {
                  "state": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
                  "kind": {"type": "string", "enum": ["received", "stored", "delivered", "discarded", "fault"], "description": "fault: a fault rule answered late or lost the answer; the state is unchanged."},
                  "detail": {"type": "string"}
                }
              },
              "Delivery": {
                "type": "object", "additionalProperties": false,
                "required": ["uniqueID", "apnsID", "door", "token", "topic", "pushType", "priority", "collapseID", "expiration", "payload", "fcmMessage", "receivedAt", "state", "events"],
                "properties": {
                  "uniqueID": {"type": "string"}, "apnsID": {"type": "string"}, "door": {"$ref": "#/components/schemas/Door"},
                  "token": {"type": "string"}, "topic": {"type": "string"},
                  "pushType": {"type": ["string", "null"]}, "priority": {"type": ["integer", "null"]},
                  "collapseID": {"type": ["string", "null"]},
                  "expiration": {"type": ["integer", "null"], "description": "apns-expiration as sent (0: once); null when none was sent."},
                  "payload": {"description": "The APNs payload (for FCM, the one the message maps to); null for a web push, whose message is encrypted."},
                  "fcmMessage": {"type": ["string", "null"]},
                  "receivedAt": {"type": "string", "format": "date-time"},
                  "state": {"type": "string"},
                  "events": {"type": "array", "items": {"$ref": "#/components/schemas/DeliveryEvent"}}
                }
              },
              "DeliveryListing": {
                "type": "object", "required": ["deliveries", "complete"], "additionalProperties": false,
                "properties": {
                  "deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/Delivery"}},
                  "complete": {"type": "boolean"}
                }
              },
              "StreamEvent": {
                "type": "object", "additionalProperties": false,
                "required": ["sequence", "uniqueID", "kind", "state", "detail", "at", "apnsID", "token", "topic", "door", "pushType"],
                "properties": {
                  "sequence": {"type": "integer"}, "uniqueID": {"type": "string"},
                  "kind": {"type": "string", "enum": ["received", "stored", "delivered", "discarded", "fault"], "description": "fault: a fault rule answered late or lost the answer; the state is unchanged."},
                  "state": {"type": "string"}, "detail": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
                  "apnsID": {"type": ["string", "null"]}, "token": {"type": ["string", "null"]}, "topic": {"type": ["string", "null"]},
                  "door": {"type": ["string", "null"], "enum": ["apns", "fcm", "webpush", null]},
                  "pushType": {"type": ["string", "null"]}
                }
              },
              "Notification": {
                "type": "object", "additionalProperties": false,
                "required": ["bundleID", "state", "identifier", "title", "subtitle", "body", "badge", "sound", "threadIdentifier", "categoryIdentifier", "interruptionLevel", "relevanceScore", "targetContentIdentifier", "userInfo", "uniqueID", "attachments"],
                "properties": {
                  "bundleID": {"type": "string"}, "state": {"type": "string", "enum": ["delivered", "pending"]},
                  "identifier": {"type": "string"}, "title": {"type": "string"}, "subtitle": {"type": "string"}, "body": {"type": "string"},
                  "badge": {"type": ["integer", "null"]},
                  "sound": {"type": ["string", "null"], "description": "default, defaultCritical, defaultRingtone, or the named sound's file name."},
                  "threadIdentifier": {"type": "string"}, "categoryIdentifier": {"type": "string"},
                  "interruptionLevel": {"type": "string", "enum": ["passive", "active", "timeSensitive", "critical"]},
                  "relevanceScore": {"type": "number"}, "targetContentIdentifier": {"type": ["string", "null"]},
                  "userInfo": {"type": "object", "description": "content.userInfo: for a push, its whole payload."},
                  "uniqueID": {"type": ["string", "null"], "description": "For a push, its apns-unique-id: the delivery log's uniqueID (GET /api/v1/deliveries/{uniqueID}); null for a local notification."},
                  "attachments": {
                    "type": "array",
                    "items": {"type": "object", "required": ["identifier", "type"], "additionalProperties": false, "properties": {"identifier": {"type": "string"}, "type": {"type": "string"}}}
                  },
                  "date": {"type": ["string", "null"], "format": "date-time", "description": "A delivered notification's date."},
                  "presented": {"type": ["boolean", "null"], "description": "A delivered notification: whether the person has been shown it (a banner, or what Focus or the scheduled summary held, once let go); null where the device did not record it."},
                  "presentation": {"type": ["string", "null"], "enum": ["banner", "quiet", "heldForFocus", "heldForSummary", "shownAfterFocus", "shownInSummary", null], "description": "A delivered notification: how it was shown, or why not yet — banner; quiet (listed without a banner: passive, the app's willPresent options, the person's settings); heldForFocus or heldForSummary (listed, held from the person); shownAfterFocus or shownInSummary (what held it let go)."},
                  "nextFireDate": {"type": ["string", "null"], "format": "date-time", "description": "A pending request's next fire date; null for one that fires on a location."},
                  "trigger": {"type": ["string", "null"], "enum": ["calendar", "timeInterval", "location", "push", null], "description": "A pending request's trigger; null for none (it fires at once)."}
                }
              },
              "ActivityState": {"type": "string", "enum": ["active", "ended", "dismissed", "stale", "pending"]},
              "Activity": {
                "type": "object", "additionalProperties": false,
                "required": ["id", "bundleID", "attributesType", "attributes", "activityState", "content", "pushType", "pushToken", "channelID", "alert", "startedAt", "startedByPush", "dismissalDate"],
                "properties": {
                  "id": {"type": "string"}, "bundleID": {"type": "string"}, "attributesType": {"type": "string"},
                  "attributes": {"description": "The activity's attributes, as JSON."},
                  "activityState": {"$ref": "#/components/schemas/ActivityState"},
                  "content": {
                    "type": "object", "additionalProperties": false, "required": ["state", "staleDate", "relevanceScore"],
                    "properties": {
                      "state": {"description": "ActivityContent.state: the content state, as JSON (what the latest push's content-state or the app's update made it)."},
                      "staleDate": {"type": ["string", "null"], "format": "date-time"},
                      "relevanceScore": {"type": "number"}
                    }
                  },
                  "pushType": {"type": ["string", "null"], "enum": ["token", "channel", null], "description": "How it takes pushes: its own push token, a broadcast channel, or none."},
                  "pushToken": {"type": ["string", "null"], "description": "Its push token (hex), once issued."},
                  "channelID": {"type": ["string", "null"], "description": "The broadcast channel it listens on."},
                  "alert": {
                    "type": ["object", "null"], "additionalProperties": false, "required": ["title", "body", "sound"],
                    "description": "The alert of the latest update that carried one.",
                    "properties": {"title": {"type": "string"}, "body": {"type": "string"}, "sound": {"type": ["string", "null"]}}
                  },
                  "startedAt": {"type": "string", "format": "date-time"},
                  "startedByPush": {"type": "boolean", "description": "Whether a push-to-start push started it."},
                  "dismissalDate": {"type": ["string", "null"], "format": "date-time"}
                }
              },
              "WidgetEntry": {
                "type": "object", "additionalProperties": false, "required": ["date", "text", "relevance"],
                "properties": {"date": {"type": "string", "format": "date-time"}, "text": {"type": "string"}, "relevance": {"type": ["number", "null"]}}
              },
              "Widget": {
                "type": "object", "additionalProperties": false,
                "required": ["bundleID", "kind", "isControl", "family", "takesPushes", "reloadedAt", "reason", "reloadPending", "entry", "policy", "entries"],
                "properties": {
                  "bundleID": {"type": "string"}, "kind": {"type": "string"}, "isControl": {"type": "boolean"},
                  "family": {"type": ["string", "null"], "description": "The widget's family (systemSmall, …); null for a control."},
                  "takesPushes": {"type": "boolean", "description": "Whether it has a WidgetPushHandler (a widgets or controls push reloads it)."},
                  "reloadedAt": {"type": ["string", "null"], "format": "date-time", "description": "When its provider last gave a timeline."},
                  "reason": {"type": ["string", "null"], "description": "Why that reload happened: placed (first shown), push, app (WidgetCenter.reloadTimelines) or policy (its reload policy came due)."},
                  "reloadPending": {"type": "boolean"},
                  "entry": {"oneOf": [{"$ref": "#/components/schemas/WidgetEntry"}, {"type": "null"}], "description": "The timeline entry shown now."},
                  "policy": {"type": ["string", "null"], "description": "The timeline's reload policy."},
                  "entries": {"type": ["array", "null"], "items": {"$ref": "#/components/schemas/WidgetEntry"}}
                }
              },
              "AppPush": {
                "oneOf": [
                  {
                    "type": "object", "additionalProperties": false,
                    "required": ["kind", "bundleID", "uniqueID", "receivedAt", "state", "handedAt", "fetchResult", "userInfo"],
                    "properties": {
                      "kind": {"const": "background"}, "bundleID": {"type": "string"},
                      "uniqueID": {"type": ["string", "null"], "description": "The push's apns-unique-id; null for one herald simulate made."},
                      "receivedAt": {"type": "string", "format": "date-time"},
                      "state": {"enum": ["waiting", "running", "handled", "notHandled", "replaced"]},
                      "handedAt": {"type": ["string", "null"], "format": "date-time", "description": "When the app answered."},
                      "fetchResult": {"enum": ["newData", "noData", "failed", null], "description": "What the app passed to the completion handler (UIBackgroundFetchResult)."},
                      "userInfo": {"description": "The payload as the app's handler gets it."}
                    }
                  },
                  {
                    "type": "object", "additionalProperties": false,
                    "required": ["kind", "bundleID", "uniqueID", "receivedAt", "state", "handedAt", "type", "dictionaryPayload"],
                    "properties": {
                      "kind": {"const": "voip"}, "bundleID": {"type": "string"}, "uniqueID": {"type": "string"},
                      "receivedAt": {"type": "string", "format": "date-time"},
                      "state": {"enum": ["waiting", "handled", "notHandled"]},
                      "handedAt": {"type": ["string", "null"], "format": "date-time", "description": "When the app answered."},
                      "type": {"const": "PKPushTypeVoIP"},
                      "dictionaryPayload": {"description": "PKPushPayload.dictionaryPayload."}
                    }
                  },
                  {
                    "type": "object", "additionalProperties": false,
                    "required": ["kind", "bundleID", "uniqueID", "receivedAt", "state", "origin", "reason", "data"],
                    "properties": {
                      "kind": {"const": "webpush"}, "bundleID": {"type": "string"}, "uniqueID": {"type": "string"},
                      "receivedAt": {"type": "string", "format": "date-time"},
                      "state": {"enum": ["shown", "dropped"]},
                      "origin": {"type": ["string", "null"], "description": "The web app's origin; null when no subscription holds the message's token."},
                      "reason": {"enum": ["noSubscription", "noData", "undecryptable", "notDeclarative", null], "description": "Why it was not shown."},
                      "data": {"description": "The decrypted message: an object for JSON, else a string; null when it could not be decrypted."}
                    }
                  }
                ]
              },
              "AppPushListing": {
                "type": "object", "required": ["appPushes", "complete"], "additionalProperties": false,
                "properties": {
                  "appPushes": {"type": "array", "items": {"$ref": "#/components/schemas/AppPush"}},
                  "complete": {"type": "boolean"}
                }
              },
              "WidgetListing": {
                "type": "object", "required": ["widgets", "complete"], "additionalProperties": false,
                "properties": {
                  "widgets": {"type": "array", "items": {"$ref": "#/components/schemas/Widget"}},
                  "complete": {"type": "boolean"}
                }
              },
              "ActivityListing": {
                "type": "object", "required": ["activities", "complete"], "additionalProperties": false,
                "properties": {
                  "activities": {"type": "array", "items": {"$ref": "#/components/schemas/Activity"}},
                  "complete": {"type": "boolean"}
                }
              },
              "NotificationListing": {
                "type": "object", "required": ["notifications", "complete"], "additionalProperties": false,
                "properties": {
                  "notifications": {"type": "array", "items": {"$ref": "#/components/schemas/Notification"}},
                  "complete": {"type": "boolean"}
                }
              },
              "Deleted": {
                "type": "object", "required": ["deleted"], "additionalProperties": false,
                "properties": {"deleted": {"type": "integer", "minimum": 0}}
              }
            }
          }
        }
        """#
}
