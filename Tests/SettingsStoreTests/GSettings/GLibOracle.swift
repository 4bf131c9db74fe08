import Foundation

/// GLib's own GVariant parser and printer, and GSettings' range check, run in Python (PyGObject,
/// Debian's python3-gi) as the oracle the Swift codec is checked against.
enum GLibOracle {
    struct Request: Encodable {
        var text = ""
        var type: String?
        var schema: String?
        var key: String?
        var differential: Bool?
    }

    /// A key of an installed schema, a value for it, and whether `gsettings set` takes it.
    struct Verdict: Decodable {
        var schema: String
        var path: String
        var key: String
        var type: String
        var text: String
        var accepted: Bool
    }

    struct Answer: Decodable {
        var ok: Bool
        var printed: String?
        var type: String?
        var inRange: Bool?
        var error: String?
        var rows: [Verdict]?
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Oracle/glib-oracle.py").path

    /// Whether the oracle can run here (python3-gi installed).
    static let isAvailable: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio",
        ]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Every request answered by one run of the oracle, in order.
    static func ask(_ requests: [Request], environment: [String: String] = [:]) throws -> [Answer] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let encoder = JSONEncoder()
        var lines = Data()
        for request in requests {
            lines.append(try encoder.encode(request))
            lines.append(0x0A)
        }
        // Written from another thread: the answers fill the output pipe meanwhile.
        let batch = lines
        let writer = Thread {
            input.fileHandleForWriting.write(batch)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let decoder = JSONDecoder()
        let answers = try data.split(separator: 0x0A).map { try decoder.decode(Answer.self, from: Data($0)) }
        guard answers.count == requests.count else {
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSLocalizedDescriptionKey: "oracle answered \(answers.count) of \(requests.count)"]
            )
        }
        return answers
    }
}
