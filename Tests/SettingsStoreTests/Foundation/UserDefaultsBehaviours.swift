import Foundation

/// The behaviours swift-corelibs-foundation's `TestUserDefaults.swift` checks, written again as
/// checks of any `UserDefaults`, so they run against Foundation's own and `SettingsDefaults` alike.
/// Each returns whether the defaults behaved as Foundation's test expects.
enum UserDefaultsBehaviours {
    typealias Check = @Sendable (UserDefaults, _ key: String) -> Bool

    static let all: [(name: String, check: Check)] = registered + setThenRead + domains

    /// A default registered, nothing stored: the typed getters read it, coerced.
    static let registered: [(name: String, check: Check)] = [
        (
            "registered Int (NSNumber 5) → integer 5",
            { d, k in register(d, k, NSNumber(value: 5)) { $0.integer(forKey: k) == 5 } }
        ),
        (
            "registered NSString → string",
            { d, k in register(d, k, "hello" as NSString) { $0.string(forKey: k) == "hello" } }
        ),
        (
            "registered String → string",
            { d, k in register(d, k, "hello") { $0.string(forKey: k) == "hello" } }
        ),
        (
            "registered NSURL → url",
            { d, k in
                register(d, k, NSURL(fileURLWithPath: "/hello/world")) {
                    $0.url(forKey: k) == URL(fileURLWithPath: "/hello/world")
                }
            }
        ),
        (
            "registered URL → url",
            { d, k in
                register(d, k, URL(fileURLWithPath: "/hello/world")) {
                    $0.url(forKey: k) == URL(fileURLWithPath: "/hello/world")
                }
            }
        ),
        (
            "registered NSData → data",
            { d, k in
                register(d, k, NSData(bytes: [0, 1, 2, 3, 4] as [UInt8], length: 5)) {
                    $0.data(forKey: k) == Data([0, 1, 2, 3, 4])
                }
            }
        ),
        (
            "registered Data → data",
            { d, k in register(d, k, Data([0, 1, 2, 3, 4])) { $0.data(forKey: k) == Data([0, 1, 2, 3, 4]) } }
        ),
        ("registered \"YES\" → bool true", { d, k in register(d, k, "YES") { $0.bool(forKey: k) } }),
        (
            "registered \"1234\" → integer 1234",
            { d, k in register(d, k, "1234") { $0.integer(forKey: k) == 1234 } }
        ),
        (
            "registered \"12.34\" → double 12.34",
            { d, k in register(d, k, "12.34") { $0.double(forKey: k) == 12.34 } }
        ),
    ]

    /// A value set, then read by a typed getter.
    static let setThenRead: [(name: String, check: Check)] = [
        (
            "set NSString → string",
            { d, k in
                d.set("hello" as NSString, forKey: k)
                return d.string(forKey: k) == "hello"
            }
        ),
        (
            "set String → string",
            { d, k in
                d.set("hello", forKey: k)
                return d.string(forKey: k) == "hello"
            }
        ),
        (
            "set NSURL → url",
            { d, k in
                d.set(NSURL(fileURLWithPath: "/hello/world"), forKey: k)
                return d.url(forKey: k) == URL(fileURLWithPath: "/hello/world")
            }
        ),
        (
            "set URL → url",
            { d, k in
                d.set(URL(fileURLWithPath: "/hello/world"), forKey: k)
                return d.url(forKey: k) == URL(fileURLWithPath: "/hello/world")
            }
        ),
        (
            "set NSData → data",
            { d, k in
                d.set(NSData(bytes: [0, 1, 2, 3, 4] as [UInt8], length: 5), forKey: k)
                return d.data(forKey: k) == Data([0, 1, 2, 3, 4])
            }
        ),
        (
            "set Data → data",
            { d, k in
                d.set(Data([0, 1, 2, 3, 4]), forKey: k)
                return d.data(forKey: k) == Data([0, 1, 2, 3, 4])
            }
        ),
        (
            "set \"YES\" → bool true",
            { d, k in
                d.set("YES", forKey: k)
                return d.bool(forKey: k)
            }
        ),
        (
            "set true → integer 1",
            { d, k in
                d.set(true, forKey: k)
                return d.integer(forKey: k) == 1
            }
        ),
        (
            "set Float 12.34 → integer 12",
            { d, k in
                d.set(12.34 as Float, forKey: k)
                return d.integer(forKey: k) == 12
            }
        ),
        (
            "set Double 12.34 → integer 12",
            { d, k in
                d.set(12.34, forKey: k)
                return d.integer(forKey: k) == 12
            }
        ),
        (
            "set \"1234\" → integer 1234",
            { d, k in
                d.set("1234", forKey: k)
                return d.integer(forKey: k) == 1234
            }
        ),
        (
            "set true → float 1",
            { d, k in
                d.set(true, forKey: k)
                return d.float(forKey: k) == 1
            }
        ),
        (
            "set 42 → float 42",
            { d, k in
                d.set(42, forKey: k)
                return d.float(forKey: k) == 42
            }
        ),
        (
            "set Double 12.34 → float 12.34",
            { d, k in
                d.set(12.34, forKey: k)
                return d.float(forKey: k) == 12.34
            }
        ),
        (
            "set \"1234\" → float 1234",
            { d, k in
                d.set("1234", forKey: k)
                return d.float(forKey: k) == 1234
            }
        ),
        (
            "set true → double 1",
            { d, k in
                d.set(true, forKey: k)
                return d.double(forKey: k) == 1
            }
        ),
        (
            "set 42 → double 42",
            { d, k in
                d.set(42, forKey: k)
                return d.double(forKey: k) == 42
            }
        ),
        (
            "set Float 12.34 → double Double(Float 12.34)",
            { d, k in
                d.set(12.34 as Float, forKey: k)
                return d.double(forKey: k) == Double(12.34 as Float)
            }
        ),
        (
            "set \"12.34\" → double 12.34",
            { d, k in
                d.set("12.34", forKey: k)
                return d.double(forKey: k) == 12.34
            }
        ),
        (
            "set true → string \"1\"",
            { d, k in
                d.set(true, forKey: k)
                return d.string(forKey: k) == "1"
            }
        ),
        (
            "set 42 → string \"42\"",
            { d, k in
                d.set(42, forKey: k)
                return d.string(forKey: k) == "42"
            }
        ),
        (
            "set Float 12.34 → string \"12.34\"",
            { d, k in
                d.set(12.34 as Float, forKey: k)
                return d.string(forKey: k) == "12.34"
            }
        ),
        (
            "set Double 12.34 → string \"12.34\"",
            { d, k in
                d.set(12.34, forKey: k)
                return d.string(forKey: k) == "12.34"
            }
        ),
    ]

    /// Creating and writing; volatile domains; persistent domains with their notifications.
    static let domains: [(name: String, check: Check)] = [
        (
            "a created defaults takes a write",
            { d, k in
                d.set(4, forKey: k)
                return d.integer(forKey: k) == 4
            }
        ),
        ("a volatile domain keeps every property-list type", { d, k in volatileDomain(d, name: k) }),
        (
            "a persistent domain is set, read whole, removed, with one notification each",
            { d, k in persistentDomain(d, name: k) }
        ),
    ]

    private static func register(
        _ defaults: UserDefaults, _ key: String, _ value: Any, _ read: (UserDefaults) -> Bool
    )
        -> Bool
    {
        defaults.register(defaults: [key: value])
        defaults.removeObject(forKey: key)
        return read(defaults)
    }

    private static func volatileDomain(_ defaults: UserDefaults, name: String) -> Bool {
        let date = Date()
        let values: [String: Any] = [
            "A Date": date, "A String": "The String", "An Array": [1, 2, 3],
            "A Dictionary": ["Swift": "Imperative", "Haskell": "Functional", "Today": date] as [String: Any],
            "Some Data": Data("The Data".utf8), "A Bool": true,
        ]
        guard !defaults.volatileDomainNames.contains(name) else { return false }
        defaults.setVolatileDomain(values, forName: name)
        let out = defaults.volatileDomain(forName: name)
        defer { defaults.removeVolatileDomain(forName: name) }
        return out.count == values.count && out["A Date"] as? Date == date
            && out["A String"] as? String == "The String"
            && out["An Array"] as? [Int] == [1, 2, 3]
            && out["A Dictionary"] as? [String: AnyHashable]
                == ["Swift": "Imperative", "Haskell": "Functional", "Today": date] as [String: AnyHashable]
            && out["Some Data"] as? Data == Data("The Data".utf8) && out["A Bool"] as? Bool == true
    }

    private static func persistentDomain(_ defaults: UserDefaults, name: String) -> Bool {
        let date = Date()
        let values: [String: Any] = [
            "An Integer": 1234, "A Double": 5678.1234, "A String": "Some string",
            "An Array": [1, 2, 3, 4, "Surprise"] as [AnyHashable],
            "A Dictionary": ["Swift": "Imperative", "LISP": "LISP", "Today": date] as [String: AnyHashable],
        ]
        let count = NotificationCount()
        let observer = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: defaults, queue: nil
        ) { _ in count.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }
        defaults.removePersistentDomain(forName: name)
        if let domain = defaults.persistentDomain(forName: name), !domain.isEmpty { return false }
        defaults.setPersistentDomain(values, forName: name)
        guard let returned = defaults.persistentDomain(forName: name) else { return false }
        let same =
            returned.count == values.count && returned["An Integer"] as? Int == 1234
            && returned["A Double"] as? Double == 5678.1234
            && returned["A String"] as? String == "Some string"
            && returned["An Array"] as? [AnyHashable] == [1, 2, 3, 4, "Surprise"]
            && returned["A Dictionary"] as? [String: AnyHashable] == [
                "Swift": "Imperative", "LISP": "LISP", "Today": date,
            ]
        defaults.removePersistentDomain(forName: name)
        let emptied = defaults.persistentDomain(forName: name).map(\.isEmpty) ?? true
        return same && emptied && count.value == 3
    }
}

/// A counter notification blocks may bump from any thread.
final class NotificationCount: @unchecked Sendable {  // every access is under `lock`
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
