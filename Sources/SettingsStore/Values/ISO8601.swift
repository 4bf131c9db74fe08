/// ISO 8601 dates in UTC for people (`2026-11-29T13:40:00Z`, fractions when there are any), and
/// the reverse, without Foundation's formatters: the CLI shows dates this way, and a `$date`
/// written as a string (`docs/PROTOCOL.md`) is read this way.
package enum ISO8601 {
    /// `seconds` since 1970 as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`.
    package static func format(secondsSince1970 seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e14 else { return String(seconds) }
        let whole = seconds.rounded(.down)
        var micros = Int64(((seconds - whole) * 1_000_000).rounded())
        var total = Int64(whole)
        if micros == 1_000_000 {
            total += 1
            micros = 0
        }
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text =
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if micros > 0 {
            var fraction = pad(micros, 6)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    /// Seconds since 1970 for `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or
    /// `±HH:MM` (a space may stand for `T`); nil for anything else.
    package static func parse(_ text: String) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2),
            scanner.take("-"),
            let day = scanner.digits(2), (1...12).contains(month), (1...daysIn(month, year)).contains(day)
        else { return nil }
        let days = Double(daysFromCivil(year, month, day))
        if scanner.isAtEnd { return days * 86_400 }
        guard scanner.take("T") || scanner.take("t") || scanner.take(" "), let hour = scanner.digits(2),
            scanner.take(":"), let minute = scanner.digits(2), hour < 24, minute < 60
        else { return nil }
        var second = 0.0
        if scanner.take(":") {
            guard let whole = scanner.digits(2), whole < 60 else { return nil }
            second = Double(whole)
            if scanner.take(".") || scanner.take(",") {
                guard let fraction = scanner.fraction() else { return nil }
                second += fraction
            }
        }
        var offset = 0.0
        if !(scanner.take("Z") || scanner.take("z")) {
            let sign: Double = scanner.take("+") ? 1 : scanner.take("-") ? -1 : 0
            guard sign != 0, let hours = scanner.digits(2) else { return nil }
            _ = scanner.take(":")
            guard let minutes = scanner.digits(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * Double(hours * 3600 + minutes * 60)
        }
        guard scanner.isAtEnd else { return nil }
        return days * 86_400 + Double(hour * 3600 + minute * 60) + second - offset
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    private static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(_ month: Int64, _ year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days-from-civil and civil-from-days, in the proleptic Gregorian calendar.
    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var offset = 0

        package init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: character) else { return false }
            offset += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int64? {
            guard bytes.count - offset >= count else { return nil }
            var value: Int64 = 0
            for byte in bytes[offset..<offset + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            offset += count
            return value
        }

        mutating func fraction() -> Double? {
            var value = 0.0
            var scale = 0.1
            let start = offset
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
                value += Double(bytes[offset] - 0x30) * scale
                scale /= 10
                offset += 1
            }
            return offset > start ? value : nil
        }
    }
}
