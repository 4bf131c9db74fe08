// settings-bench: measures settingsd beside its peers and prints a table with ratios.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    USAGE: settings-bench <suite> [--quick]

    SUITES:
      store     cached reads, durable writes, batches and opening a large store,
                beside UserDefaults and raw libsqlite3
      observe   @Setting property reads beside store reads; set-to-owner-notification latency
    """

switch arguments.first {
case "store":
    StoreBenchmark(quick: arguments.contains("--quick")).run()
case "observe":
    ObserveBenchmark(quick: arguments.contains("--quick")).run()
case "-h", "--help", "help":
    print(usage)
default:
    FileHandle.standardError.write(Data("Error: unknown or missing suite\n\(usage)\n".utf8))
    exit(64)
}
