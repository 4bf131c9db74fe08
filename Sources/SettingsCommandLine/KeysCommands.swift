import SettingsDaemonClient
import SettingsStore
import SettingsSync

#if canImport(Glibc)
    import Glibc
#endif

/// `settingsd keys init|show|export|import|rotate`: the sync key that seals what leaves this
/// machine for a hub or a synced folder (docs/SYNC.md, "End-to-end encryption").
enum KeysCommands {
    static let passphrase = Flag(
        "--passphrase",
        "init, import: derive the key from a passphrase read from standard input (Argon2id), not at random")
    static let salt = Option<String>(
        "--salt", "HEX",
        "with --passphrase: the salt the others derived the key with ('settingsd keys show' there prints it)")
    static let saltFrom = Option<String>(
        "--salt-from", "DIR",
        "with --passphrase: take the salt from this sealed folder's seal record", completion: .directory)
    static let force = Flag(
        "--force", "init: replace the key this machine holds (what is sealed under it is lost)")

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let positionals = try arguments.positionals(1...1)
        let store = try SyncKeyStores.standard()
        switch positionals[0] {
        case "init":
            return try initialize(arguments, store: store)
        case "show":
            try refuse([passphrase, force], [salt, saltFrom], in: arguments, for: "show")
            guard let keyring = try store.load() else { return noKey(store) }
            Output.line("key: \(keyring.keyID)")
            Output.line("kept in: \(store.location)")
            if let derivation = keyring.current.derivation {
                Output.line(
                    "derived from a passphrase: Argon2id, salt \(derivation.saltText), \(derivation.operations) passes, \(derivation.memoryBytes >> 20) MiB"
                )
            } else {
                Output.line("made at random")
            }
            Output.line(
                "previous keys: \(keyring.previous.map(\.id).joined(separator: ", ").nonEmpty ?? "none")")
            return 0
        case "export":
            try refuse([passphrase, force], [salt, saltFrom], in: arguments, for: "export")
            guard let keyring = try store.load() else { return noKey(store) }
            Output.line(keyring.current.recoveryText)
            Output.standardError(
                "this recovery text is the key \(keyring.keyID): anyone who has it reads everything sealed under it. Enter it on another machine with 'settingsd keys import', and keep a copy somewhere safe: without it (or the passphrase), what is sealed cannot be read by anyone.\n"
            )
            return 0
        case "import":
            try refuse([force], [], in: arguments, for: "import")
            let key: SyncKey
            if arguments.isSet(passphrase) {
                key = try derive(arguments, salt: try givenSalt(arguments) ?? missingSalt())
            } else {
                try refuse([], [salt, saltFrom], in: arguments, for: "import without --passphrase")
                key = try SyncKey(
                    recoveryText: String(decoding: try FileIO.read("-", limit: 1 << 16), as: UTF8.self))
            }
            let keyring = try store.load().map { $0.importing(key) } ?? SyncKeyring(current: key)
            try store.save(keyring)
            Output.standardError(
                "this machine now seals with key \(keyring.keyID) (kept in \(store.location)); restart the daemon to use it\n"
            )
            return 0
        case "rotate":
            try refuse([passphrase, force], [salt, saltFrom], in: arguments, for: "rotate")
            guard let keyring = try store.load() else { return noKey(store) }
            let rotated = keyring.rotated()
            try store.save(rotated)
            Output.standardError(
                "this machine now seals with key \(rotated.keyID) (rotated from \(keyring.keyID)); restart the daemon: it seals everything again under the new key. The other machines stop syncing until they import it ('settingsd keys export' here, 'settingsd keys import' there)\n"
            )
            return 0
        case let action:
            throw UsageError(
                "keys has no action '\(action)' (init, show, export, import or rotate)", command: "keys")
        }
    }

    private static func initialize(_ arguments: ParsedArguments, store: any SyncKeyStore) throws -> Int32 {
        if let existing = try store.load(), !arguments.isSet(force) {
            throw SettingsError(
                .invalidValue,
                "this machine already holds sync key \(existing.keyID) (in \(store.location)): 'settingsd keys rotate' replaces it keeping what is sealed readable, 'keys import' takes another machine's, '--force' replaces it and loses what is sealed under it"
            )
        }
        let key: SyncKey
        if arguments.isSet(passphrase) {
            key = try derive(arguments, salt: try givenSalt(arguments))
        } else {
            try refuse([], [salt, saltFrom], in: arguments, for: "init without --passphrase")
            key = SyncKey.random()
        }
        try store.save(SyncKeyring(current: key))
        Output.standardError(
            "made sync key \(key.id), kept in \(store.location): from now on what this machine sends to a hub or a synced folder is sealed (restart the daemon). Copy it to your other machines with 'settingsd keys export' and 'settingsd keys import'\(key.derivation == nil ? ", and keep the recovery text somewhere safe: losing every copy loses what is sealed" : ", or derive it there from the same passphrase with --salt \(key.derivation?.saltText ?? "")")\n"
        )
        return 0
    }

    /// The key from a passphrase on standard input (without echo on a terminal).
    private static func derive(_ arguments: ParsedArguments, salt: [UInt8]?) throws -> SyncKey {
        let interactive = isatty(STDIN_FILENO) == 1
        if interactive { Output.standardError("passphrase: ") }
        let text = try readSecretLine(echoing: !interactive)
        if interactive { Output.standardError("\n") }
        return try SyncKey.derived(fromPassphrase: text, salt: salt)
    }

    /// The salt `--salt` or `--salt-from` names, nil when neither does.
    private static func givenSalt(_ arguments: ParsedArguments) throws -> [UInt8]? {
        if let text = arguments.value(salt) {
            guard let bytes = SyncKey.Derivation.salt(fromText: text) else {
                throw UsageError("--salt must be 32 hexadecimal digits", command: "keys")
            }
            return bytes
        }
        guard let folder = arguments.value(saltFrom) else { return nil }
        let path = folder + "/seal.json"
        let record = try SealRecord.read(
            try FileIO.read(path, limit: 1 << 16), from: "the folder '\(folder)'")
        guard let derivation = record.derivation else {
            throw SettingsError(
                .invalidValue,
                "the folder '\(folder)' is sealed under key \(record.keyID), which was made at random, not from a passphrase: import its recovery text instead"
            )
        }
        return derivation.salt
    }

    private static func missingSalt() throws -> [UInt8] {
        throw UsageError(
            "import --passphrase needs the salt the key was derived with: --salt HEX or --salt-from DIR",
            command: "keys")
    }

    /// One line of standard input, echo turned off while it is read from a terminal.
    private static func readSecretLine(echoing: Bool) throws -> String {
        var saved = termios()
        let silenced = !echoing && tcgetattr(STDIN_FILENO, &saved) == 0
        if silenced {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer { if silenced { tcsetattr(STDIN_FILENO, TCSANOW, &saved) } }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            bytes.append(byte)
            guard bytes.count <= 4_096 else {
                throw UsageError("the passphrase is over 4096 bytes", command: "keys")
            }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func refuse(
        _ flags: [Flag], _ options: [Option<String>], in arguments: ParsedArguments, for action: String
    ) throws {
        for flag in flags where arguments.isSet(flag) {
            throw UsageError("\(flag.spec.name) is not for keys \(action)", command: "keys")
        }
        for option in options where arguments.value(option) != nil {
            throw UsageError("\(option.spec.name) is not for keys \(action)", command: "keys")
        }
    }

    private static func noKey(_ store: any SyncKeyStore) -> Int32 {
        Output.standardError(
            "this machine holds no sync key (looked in \(store.location)): 'settingsd keys init' makes one, 'settingsd keys import' takes another machine's\n"
        )
        return 1
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
