import Foundation
import PostgresFixture
import Testing

@Suite("The PostgreSQL fixture's programs inherit nothing of the test process")
struct PostgresFixtureTests {
    @Test("a program the fixture runs sees no descriptor the test process left open")
    func programsInheritNoDescriptor() throws {
        // A descriptor without close-on-exec, as Foundation's Process keeps the socket by which it
        // learns that a child exited: a server holding a copy hid every such exit.
        let leaked = open("/dev/null", O_RDONLY)
        try #require(leaked > 2)
        defer { close(leaked) }
        let directory = TemporaryDirectory()
        let listing = directory.file("fds")
        try PostgresCluster.run("/bin/sh", ["-c", "ls /proc/self/fd > \(listing)"])
        let descriptors = try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n")
        #expect(!descriptors.contains("\(leaked)"), "\(descriptors)")
        #expect(descriptors.contains("1"))
    }
}
