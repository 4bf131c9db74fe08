import Foundation
import SettingsDaemonClient
import SettingsDaemonKit
import SettingsGNOME
import SettingsSync
import SettingsWire

/// `--json`: the tables as JSON lines on standard output, every other line on standard error.
let printsJSON = CommandLine.arguments.contains("--json")

/// `--only PART[,PART…]`: run only those parts of a suite (see the usage), for profiling.
func selected(_ part: String) -> Bool {
    guard let parts = flagValue("--only") else { return true }
    return parts.split(separator: ",").contains { $0 == part }
}

/// The word after `flag` on the command line, if the flag is there and has one.
func flagValue(_ flag: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count
    else { return nil }
    return CommandLine.arguments[index + 1]
}

/// A line for people beside the table (on standard error under `--json`).
func note(_ message: String) {
    if printsJSON {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    } else {
        print(message)
    }
}

/// What a measurement has to reach; `met` in the JSON output says whether it did.
struct Target {
    enum Bound {
        case ratioAtLeast(Double)
        case ratioAtMost(Double)
        /// The value (in the row's unit) at most this.
        case valueAtMost(Double)
        /// The value at least this.
        case valueAtLeast(Double)
        /// A latency row: its p50 and p99 at most these, in seconds.
        case percentiles(p50: Double, p99: Double)
        case reported
    }

    let bound: Bound
    let text: String

    static func ratio(atLeast ratio: Double) -> Target {
        Target(bound: .ratioAtLeast(ratio), text: ">= \(ratio)x")
    }
    static func ratio(atMost ratio: Double) -> Target {
        Target(bound: .ratioAtMost(ratio), text: "<= \(ratio)x")
    }
    /// At most `limit` in the row's unit, shown as `text` (`< 3 s`).
    static func atMost(_ limit: Double, _ text: String) -> Target {
        Target(bound: .valueAtMost(limit), text: text)
    }
    /// At least `limit` in the row's unit, shown as `text` (`>= 15 k/s`).
    static func atLeast(_ limit: Double, _ text: String) -> Target {
        Target(bound: .valueAtLeast(limit), text: text)
    }
    /// Latency percentiles, in seconds, at most these.
    static func percentiles(p50: Double, p99: Double) -> Target {
        Target(
            bound: .percentiles(p50: p50, p99: p99),
            text: "p50 < \(Report.milliseconds(p50)), p99 < \(Report.milliseconds(p99))")
    }
    static let reported = Target(bound: .reported, text: "reported")
}

/// A table of measurements, each beside its peer, printed as aligned text or as JSON lines.
struct Report {
    struct Row {
        let name: String
        /// The measurement in `unit` (operations per second, seconds, MiB).
        let value: Double
        let unit: String
        /// The value as people read it.
        let display: String
        let peerName: String
        let peerValue: Double?
        let peerDisplay: String
        /// ours / peer.
        let ratio: Double?
        let target: Target
        /// The 99th percentile of a latency row, in seconds.
        var p99: Double? = nil
        /// A latency row's distribution: its 0th to 100th percentiles, in seconds (JSON only, for
        /// the plots `scripts/plots` draws).
        var percentiles: [Double]? = nil

        /// Whether the target is met; nil when it is only reported.
        var met: Bool? {
            switch target.bound {
            case .ratioAtLeast(let bound): ratio.map { $0 >= bound }
            case .ratioAtMost(let bound): ratio.map { $0 <= bound }
            case .valueAtMost(let bound): value <= bound
            case .valueAtLeast(let bound): value >= bound
            case .percentiles(let p50, let p99): value <= p50 && (self.p99 ?? .infinity) <= p99
            case .reported: nil
            }
        }
    }

    let title: String
    private(set) var rows: [Row] = []

    init(title: String) {
        self.title = title
    }

    /// A throughput comparison: higher is better; ratio is ours / peer.
    mutating func rate(_ name: String, ours: Double, peer: Double, peerName: String, target: Target) {
        rows.append(
            Row(
                name: name, value: ours, unit: "ops/s", display: Self.format(rate: ours), peerName: peerName,
                peerValue: peer, peerDisplay: Self.format(rate: peer), ratio: ours / peer, target: target))
    }

    /// A throughput with no peer.
    mutating func rate(_ name: String, _ ours: Double, target: Target) {
        rows.append(
            Row(
                name: name, value: ours, unit: "ops/s", display: Self.format(rate: ours), peerName: "",
                peerValue: nil, peerDisplay: "-", ratio: nil, target: target))
    }

    /// A duration comparison: lower is better; ratio is ours / peer.
    mutating func time(_ name: String, ours: Double, peer: Double, peerName: String, target: Target) {
        rows.append(
            Row(
                name: name, value: ours, unit: "s", display: Self.milliseconds(ours), peerName: peerName,
                peerValue: peer, peerDisplay: Self.milliseconds(peer), ratio: ours / peer, target: target))
    }

    /// A duration with no peer, in seconds.
    mutating func seconds(_ name: String, _ seconds: Double, target: Target) {
        let display = seconds >= 1 ? String(format: "%.2f s", seconds) : Self.milliseconds(seconds)
        rows.append(
            Row(
                name: name, value: seconds, unit: "s", display: display, peerName: "", peerValue: nil,
                peerDisplay: "-", ratio: nil, target: target))
    }

    /// A latency distribution, in seconds: the row's value is the median; beside the peer's
    /// distribution when there is one (the ratio is of the medians).
    mutating func latency(
        _ name: String, sorted samples: [Double], peer: [Double]? = nil, peerName: String = "", target: Target
    ) {
        let p50 = samples[samples.count / 2]
        let p99 = samples[samples.count * 99 / 100]
        let peerP50 = peer.flatMap { $0.isEmpty ? nil : $0[$0.count / 2] }
        let peerDisplay =
            peer.flatMap { samples in
                samples.isEmpty
                    ? nil
                    : "p50 \(Self.milliseconds(samples[samples.count / 2])), p99 \(Self.milliseconds(samples[samples.count * 99 / 100]))"
            } ?? "-"
        var row = Row(
            name: name, value: p50, unit: "s",
            display: "p50 \(Self.milliseconds(p50)), p99 \(Self.milliseconds(p99))", peerName: peerName,
            peerValue: peerP50, peerDisplay: peerDisplay, ratio: peerP50.flatMap { $0 > 0 ? p50 / $0 : nil },
            target: target)
        row.p99 = p99
        row.percentiles = (0...100).map { samples[min(samples.count * $0 / 100, samples.count - 1)] }
        rows.append(row)
    }

    /// Any other quantity (`unit` such as `MiB`), beside its peer's when there is one (a peer
    /// name with no value says why there is none).
    mutating func quantity(
        _ name: String, _ value: Double, unit: String, format: String, peer: Double? = nil,
        peerName: String = "", target: Target
    ) {
        rows.append(
            Row(
                name: name, value: value, unit: unit, display: String(format: format, value),
                peerName: peerName,
                peerValue: peer, peerDisplay: peer.map { String(format: format, $0) } ?? "-",
                ratio: peer.flatMap { $0 > 0 ? value / $0 : nil }, target: target))
    }

    /// Prints the table, or with `json` one object per row.
    func print(json: Bool = printsJSON) {
        guard !json else {
            for row in rows { Swift.print(jsonLine(row)) }
            return
        }
        let header = ["measurement", "settingsd", "peer", "peer value", "ratio", "target", "met"]
        let table =
            [header]
            + rows.map { row in
                [
                    row.name, row.display, row.peerName, row.peerDisplay,
                    row.ratio.map { String(format: "%.2fx", $0) } ?? "-", row.target.text,
                    row.met.map { $0 ? "yes" : "NO" } ?? "-",
                ]
            }
        let widths = (0..<header.count).map { column in table.map { $0[column].count }.max() ?? 0 }
        Swift.print("\n== \(title) ==")
        for (index, line) in table.enumerated() {
            let cells = line.enumerated().map {
                $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0)
            }
            Swift.print(cells.joined(separator: "  "))
            if index == 0 {
                Swift.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
            }
        }
    }

    private func jsonLine(_ row: Row) -> String {
        func number(_ value: Double?) -> String {
            guard let value, value.isFinite else { return "null" }
            return String(format: "%.6g", value)
        }
        func string(_ text: String) -> String {
            "\""
                + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                    of: "\"", with: "\\\"") + "\""
        }
        var fields = [
            "\"suite\":\(string(title))", "\"measurement\":\(string(row.name))",
            "\"value\":\(number(row.value))",
            "\"unit\":\(string(row.unit))",
            "\"peer\":\(row.peerName.isEmpty ? "null" : string(row.peerName))",
            "\"peer_value\":\(number(row.peerValue))", "\"ratio\":\(number(row.ratio))",
            "\"target\":\(string(row.target.text))",
            "\"met\":\(row.met.map { $0 ? "true" : "false" } ?? "null")",
        ]
        if let p99 = row.p99 { fields.append("\"p99\":\(number(p99))") }
        if let percentiles = row.percentiles {
            fields.append("\"percentiles\":[\(percentiles.map { number($0) }.joined(separator: ","))]")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func format(rate: Double) -> String {
        switch rate {
        case 1_000_000...: String(format: "%.2f M/s", rate / 1_000_000)
        case 1_000...: String(format: "%.1f k/s", rate / 1_000)
        default: String(format: "%.0f /s", rate)
        }
    }

    static func milliseconds(_ seconds: Double) -> String {
        seconds < 0.001 ? String(format: "%.3f ms", seconds * 1e3) : String(format: "%.2f ms", seconds * 1e3)
    }
}

/// Runs the two measurements in alternating rounds (so disk and cache states even out) and
/// returns the median of each.
func alternating(rounds: Int = 3, ours: () throws -> Double, peer: () throws -> Double) rethrows -> (
    ours: Double, peer: Double
) {
    var oursResults: [Double] = []
    var peerResults: [Double] = []
    for _ in 0..<rounds {
        peerResults.append(try peer())
        oursResults.append(try ours())
    }
    return (median(oursResults), median(peerResults))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

/// Runs `body` `count` times and returns operations per second.
func measureRate(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for index in 0..<count { try body(index) }
    let elapsed = clock.now - start
    return Double(count) / elapsed.seconds
}

/// Runs `body` once and returns its duration in seconds.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return (clock.now - start).seconds
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// This process's resident memory in MiB, from /proc.
func residentMemoryMiB() -> Double {
    residentMemoryMiB(of: nil)
}

/// The resident memory of process `pid` (this one when nil) in MiB, from /proc.
func residentMemoryMiB(of pid: pid_t?) -> Double {
    guard
        let status = try? String(
            contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Double(line.split(separator: " ")[1])
    else { return .nan }
    return kilobytes / 1024
}

/// A fresh temporary folder for one benchmark, removed by `cleanUp()`.
struct Scratch {
    let path: String

    init() {
        self.init(path: NSTemporaryDirectory() + "settings-bench-\(UUID().uuidString.prefix(8))")
    }

    private init(path: String) {
        self.path = path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A folder inside this one (removed with it).
    func folder(_ name: String) -> Scratch { Scratch(path: file(name)) }

    func file(_ name: String) -> String { path + "/" + name }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a suite with a scratch folder that is removed afterwards; an error ends the program with
/// status 1 and a one-line message.
func runSuite(_ body: (Scratch) throws -> Void) {
    let scratch = Scratch()
    defer { scratch.cleanUp() }
    do {
        try body(scratch)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}
