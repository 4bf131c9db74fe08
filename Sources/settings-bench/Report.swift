import Foundation

/// A table of measurements, each beside its peer, printed as aligned text.
struct Report {
    struct Row {
        let name: String
        let ours: String
        let peer: String
        let peerName: String
        let ratio: String
        let target: String
    }

    let title: String
    private(set) var rows: [Row] = []

    init(title: String) {
        self.title = title
    }

    /// A throughput comparison: higher is better; ratio is ours / peer.
    mutating func rate(_ name: String, ours: Double, peer: Double, peerName: String, target: String) {
        rows.append(
            Row(
                name: name, ours: Self.format(rate: ours), peer: Self.format(rate: peer), peerName: peerName,
                ratio: String(format: "%.2fx", ours / peer), target: target))
    }

    /// A duration comparison: lower is better; ratio is ours / peer.
    mutating func time(_ name: String, ours: Double, peer: Double, peerName: String, target: String) {
        rows.append(
            Row(
                name: name, ours: String(format: "%.2f ms", ours * 1e3),
                peer: String(format: "%.2f ms", peer * 1e3),
                peerName: peerName, ratio: String(format: "%.2fx", ours / peer), target: target))
    }

    /// A plain measurement with no peer.
    mutating func value(_ name: String, _ ours: String, target: String) {
        rows.append(Row(name: name, ours: ours, peer: "-", peerName: "", ratio: "-", target: target))
    }

    func print() {
        let header = ["measurement", "settingsd", "peer", "peer value", "ratio", "target"]
        let table = [header] + rows.map { [$0.name, $0.ours, $0.peerName, $0.peer, $0.ratio, $0.target] }
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

    static func format(rate: Double) -> String {
        switch rate {
        case 1_000_000...: String(format: "%.2f M/s", rate / 1_000_000)
        case 1_000...: String(format: "%.1f k/s", rate / 1_000)
        default: String(format: "%.0f /s", rate)
        }
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
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Double(line.split(separator: " ")[1])
    else { return .nan }
    return kilobytes / 1024
}

/// A fresh temporary folder for one benchmark, removed by `cleanUp()`.
struct Scratch {
    let path = NSTemporaryDirectory() + "settings-bench-\(UUID().uuidString.prefix(8))"

    init() {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

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
