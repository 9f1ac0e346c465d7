import ActivityKit
import Dispatch
import Foundation

/// A game's score as a Live Activity: the attributes never change, the score does.
struct ScoreAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        var home: Int
        var away: Int
    }

    var homeTeam: String
    var awayTeam: String
}

/// An app with a Live Activity, as in Apple's "Displaying live data with Live Activities": it starts a game's score
/// activity (`HERALD_ACTIVITY`: `token` — its own push token; `channel:<id>` — a broadcast channel; `local` — no
/// pushes), or waits for a provider to start one (`push-to-start`), and prints what it sees. SIGUSR1 makes the app
/// score a home goal (`update`), SIGUSR2 ends the activity.
@main
struct ScoreApp {
    static func main() async {
        let mode = ProcessInfo.processInfo.environment["HERALD_ACTIVITY"] ?? "token"
        if mode == "push-to-start" {
            Task {
                for await token in Activity<ScoreAttributes>.pushToStartTokenUpdates {
                    say("push-to-start token: \(hex(token))")
                }
            }
            Task {
                for await activity in Activity<ScoreAttributes>.activityUpdates {
                    say("activity from push: \(activity.id) \(activity.attributes.homeTeam) v \(activity.attributes.awayTeam)")
                    observe(activity)
                }
            }
        } else {
            let pushType: PushType? =
                switch mode {
                case "local": nil
                case let channel where channel.hasPrefix("channel:"): .channel(String(channel.dropFirst(8)))
                default: .token
                }
            do {
                let activity = try Activity.request(
                    attributes: ScoreAttributes(homeTeam: "Lions", awayTeam: "Tigers"),
                    content: ActivityContent(state: .init(home: 0, away: 0), staleDate: nil), pushType: pushType)
                say("activity started: \(activity.id)")
                observe(activity)
                handleSignals(for: activity)
            } catch {
                say("activity failed: \(error)")
            }
        }
        while true { try? await Task.sleep(for: .seconds(3600)) }
    }

    /// Prints the activity's token, content and state as they change.
    static func observe(_ activity: Activity<ScoreAttributes>) {
        Task {
            for await token in activity.pushTokenUpdates { say("activity token: \(hex(token))") }
        }
        Task {
            for await content in activity.contentUpdates {
                say("activity content: \(content.state.home)-\(content.state.away)")
            }
        }
        Task {
            for await state in activity.activityStateUpdates { say("activity state: \(state)") }
        }
    }

    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []

    /// SIGUSR1: a home goal; SIGUSR2: the end.
    static func handleSignals(for activity: Activity<ScoreAttributes>) {
        for (number, action) in [(SIGUSR1, "goal"), (SIGUSR2, "end")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Task {
                    if action == "goal" {
                        let score = activity.content.state
                        await activity.update(
                            ActivityContent(state: .init(home: score.home + 1, away: score.away), staleDate: nil))
                        say("app updated: \(score.home + 1)-\(score.away)")
                    } else {
                        await activity.end(nil, dismissalPolicy: .immediate)
                        say("app ended")
                    }
                }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// One line on standard output, written at once (a test reads it as it comes).
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }
}
