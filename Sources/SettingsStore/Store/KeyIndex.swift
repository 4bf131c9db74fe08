import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keys to row numbers without a `String` per key: every key's bytes (its NFC form, its identity
/// everywhere, see `KeyIdentity`) sit in one byte array, and an open-addressing table of row
/// numbers is hashed on those bytes.
///
/// Each slot keeps 32 bits of its key's hash beside the row, so a probe compares key bytes only
/// when those bits match: a probe that meets another key costs no read of that key's span and
/// bytes (two cache misses each, at a million keys, where opening a store inserts them all).
/// Where a key's probe starts is drawn from those same bits, so growing the table moves slots
/// without reading or hashing a single key (an initial sync grows it from nothing, batch by batch).
///
/// A million keys of 16 bytes cost about 40 MB here (bytes, spans, table); as dictionary keys
/// they cost about 100 MB (a heap object per key over 15 bytes, 16 bytes a bucket).
///
/// The caller numbers rows (`EntryTable` reuses freed ones); this index only records which key a
/// row holds.
struct KeyIndex {
    /// Every key's bytes, back to back; a removed key's bytes stay until compaction.
    private var bytes: [UInt8] = []
    /// Per row: where its key's bytes start (high 40 bits) and how many there are (low 24 bits),
    /// or `Self.free` for a row that holds no key.
    private var spans: [UInt64] = []
    /// Open addressing with linear probing: in the low 32 bits a row number, `Self.empty` or
    /// `Self.deleted`; in the high 32 bits the top of the key's hash (`tag`).
    private var slots = [UInt64](repeating: Self.emptySlot, count: 8)
    /// Slots holding a row or a deletion mark: what probing walks over.
    private var occupied = 0
    /// Bytes of removed keys still in `bytes`.
    private var deadBytes = 0
    private(set) var count = 0

    private static let empty: Int32 = -1
    private static let deleted: Int32 = -2
    private static let emptySlot = UInt64(UInt32(bitPattern: empty))
    private static let deletedSlot = UInt64(UInt32(bitPattern: deleted))
    private static let free = UInt64.max
    /// The longest key a span can describe; `KeyValidation` refuses longer ones on every path.
    static let maximumKeyBytes = KeyValidation.absoluteMaximumBytes

    /// The row holding `key`, if any.
    func row(of key: String) -> Int32? {
        Self.withIdentityBytes(of: key) { key in
            let row = Self.row(in: slots[find(key, hash: Self.hash(key))])
            return row >= 0 ? row : nil
        }
    }

    /// The row holding `key`; when none does, `key` is recorded in row `fresh` (which must hold
    /// no key) and `inserted` says so. One hash and one probe either way.
    mutating func row(of key: String, insertingInto fresh: Int32) -> (row: Int32, inserted: Bool) {
        Self.withIdentityBytes(of: key) { key in
            let hash = Self.hash(key)
            var slot = find(key, hash: hash)
            let found = Self.row(in: slots[slot])
            if found >= 0 { return (found, false) }
            if (occupied + 1) * 4 > slots.count * 3 {
                rehash(capacity: Swift.max(8, (count + 1) * 2).nextPowerOfTwo)
                slot = find(key, hash: hash)
            }
            if slots[slot] == Self.emptySlot { occupied += 1 }
            slots[slot] = Self.slot(row: fresh, hash: hash)
            record(key, inRow: fresh)
            count += 1
            return (fresh, true)
        }
    }

    /// Forgets `key`; returns the row it was in.
    mutating func remove(_ key: String) -> Int32? {
        let removed: Int32? = Self.withIdentityBytes(of: key) { key in
            let slot = find(key, hash: Self.hash(key))
            let row = Self.row(in: slots[slot])
            guard row >= 0 else { return nil }
            slots[slot] = Self.deletedSlot
            deadBytes += Int(spans[Int(row)] & 0xFF_FFFF)
            spans[Int(row)] = Self.free
            count -= 1
            return row
        }
        if deadBytes > 64 << 10, deadBytes * 2 > bytes.count { compact() }
        return removed
    }

    /// Whether `row` holds a key.
    func holdsKey(_ row: Int32) -> Bool {
        Int(row) < spans.count && spans[Int(row)] != Self.free
    }

    /// The key `row` holds (it must hold one).
    func key(ofRow row: Int32) -> String {
        withKeyBytes(ofRow: row) { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the key `row` holds starts with `prefix` (in its normal form), byte by byte.
    func key(ofRow row: Int32, hasPrefix prefix: [UInt8]) -> Bool {
        withKeyBytes(ofRow: row) { $0.starts(with: prefix) }
    }

    /// The rows that hold a key, in no particular order.
    var rows: some Sequence<Int32> {
        spans.indices.lazy.filter { [spans] in spans[$0] != Self.free }.map { Int32($0) }
    }

    /// Reads the slots where `keys` start probing, all before any is needed: at a million keys the
    /// table is far larger than the cache, and an insert's first read of it is a miss. Read one at
    /// a time, each insert waits for its own; read together, the misses overlap. Opening a store
    /// of a million keys spent a fifth of its time waiting on them.
    func touchSlots(of keys: some Collection<String>) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: keys.count) { positions in
            let shift = Self.shift(forCapacity: slots.count)
            for (position, key) in zip(positions.indices, keys) {
                let tag = Self.tag(Self.withIdentityBytes(of: key) { Self.hash($0) })
                positions[position] = Self.home(of: tag, shift: shift)
            }
            var touched: UInt64 = 0
            slots.withUnsafeBufferPointer { slots in
                for position in positions { touched ^= slots[position] }
            }
            // Kept, so the reads are not optimised away.
            Self.touched.store(touched, ordering: .relaxed)
        }
    }

    private static let touched = Atomic<UInt64>(0)

    /// Makes room for `capacity` keys without growing the table again.
    mutating func reserveCapacity(_ capacity: Int) {
        let needed = (capacity * 4 / 3 + 1).nextPowerOfTwo
        if needed > slots.count { rehash(capacity: needed) }
    }

    private func withKeyBytes<Result>(ofRow row: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Result)
        -> Result
    {
        let span = spans[Int(row)]
        let start = Int(span >> 24)
        let length = Int(span & 0xFF_FFFF)
        return bytes.withUnsafeBufferPointer {
            body(UnsafeBufferPointer(rebasing: $0[start..<(start + length)]))
        }
    }

    /// Calls `body` with the bytes of `key`'s identity (its NFC form); an ASCII key, nearly
    /// every key, is its own identity and is passed as it is.
    @inline(__always)
    private static func withIdentityBytes<Result>(
        of key: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        var text = key
        if !text.withUTF8({ UnsafeRawBufferPointer($0).isASCII }) { text = KeyIdentity.normalize(key) }
        return text.withUTF8(body)
    }

    /// Whether the key `row` holds is `key`, byte for byte.
    private func holds(_ key: UnsafeBufferPointer<UInt8>, inRow row: Int32) -> Bool {
        let span = spans[Int(row)]
        guard Int(span & 0xFF_FFFF) == key.count else { return false }
        let start = Int(span >> 24)
        return bytes.withUnsafeBytes { stored in
            guard let storedBase = stored.baseAddress, let keyBase = key.baseAddress else {
                return key.isEmpty
            }
            return memcmp(storedBase + start, keyBase, key.count) == 0
        }
    }

    /// The slot holding `key`'s row, or the slot where it would go.
    private func find(_ key: UnsafeBufferPointer<UInt8>, hash: Int) -> Int {
        let mask = slots.count - 1
        let tag = Self.tag(hash)
        var slot = Self.home(of: tag, shift: Self.shift(forCapacity: slots.count))
        var firstDeleted: Int?
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let entry = slots[slot]
                if entry == Self.emptySlot { return firstDeleted ?? slot }
                if entry == Self.deletedSlot {
                    if firstDeleted == nil { firstDeleted = slot }
                } else if entry >> 32 == tag, holds(key, inRow: Self.row(in: entry)) {
                    return slot
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// The row number in a slot (negative: `empty` or `deleted`).
    @inline(__always)
    private static func row(in slot: UInt64) -> Int32 {
        Int32(truncatingIfNeeded: slot)
    }

    /// The bits of a hash that a slot keeps, its top 32: they tell keys apart in a probe and
    /// place the slot (`home`).
    @inline(__always)
    private static func tag(_ hash: Int) -> UInt64 {
        UInt64(UInt(bitPattern: hash) >> (Int.bitWidth - 32))
    }

    /// A slot holding `row`, whose key hashes to `hash`.
    @inline(__always)
    private static func slot(row: Int32, hash: Int) -> UInt64 {
        tag(hash) << 32 | UInt64(UInt32(bitPattern: row))
    }

    private mutating func record(_ key: UnsafeBufferPointer<UInt8>, inRow row: Int32) {
        precondition(key.count <= Self.maximumKeyBytes, "a key of \(key.count) bytes is over 16 MiB")
        let span = UInt64(bytes.count) << 24 | UInt64(key.count)
        bytes.append(contentsOf: key)
        if Int(row) >= spans.count {
            spans.append(contentsOf: repeatElement(Self.free, count: Int(row) - spans.count + 1))
        }
        spans[Int(row)] = span
    }

    /// Moves every row's slot into a table of `capacity` (a power of two), from its tag alone;
    /// deletion marks are left behind.
    private mutating func rehash(capacity: Int) {
        var table = [UInt64](repeating: Self.emptySlot, count: capacity)
        let mask = capacity - 1
        let shift = Self.shift(forCapacity: capacity)
        table.withUnsafeMutableBufferPointer { table in
            for entry in slots where Self.row(in: entry) >= 0 {
                var slot = Self.home(of: entry >> 32, shift: shift)
                while table[slot] != Self.emptySlot { slot = (slot + 1) & mask }
                table[slot] = entry
            }
        }
        slots = table
        occupied = count
    }

    /// Where probing for a key with `tag` starts: the top bits of the tag times 2^64/φ
    /// (Fibonacci hashing), so that every bit of the tag moves it and the slots it shares a
    /// start with still differ in their whole tag.
    @inline(__always)
    private static func home(of tag: UInt64, shift: Int) -> Int {
        Int(truncatingIfNeeded: (tag &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The shift `home` takes for a table of `capacity` slots (a power of two).
    @inline(__always)
    private static func shift(forCapacity capacity: Int) -> Int {
        Int.bitWidth - capacity.trailingZeroBitCount
    }

    /// Rewrites `bytes` with the live keys only.
    private mutating func compact() {
        var packed: [UInt8] = []
        packed.reserveCapacity(bytes.count - deadBytes)
        for row in rows {
            let span = spans[Int(row)]
            let start = Int(span >> 24)
            let length = Int(span & 0xFF_FFFF)
            spans[Int(row)] = UInt64(packed.count) << 24 | UInt64(length)
            packed.append(contentsOf: bytes[start..<(start + length)])
        }
        bytes = packed
        deadBytes = 0
    }

    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        // Seeded per process, like every Swift hash table: keys chosen by clients cannot be made
        // to collide on purpose.
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(key))
        return hasher.finalize()
    }
}

extension Int {
    /// The smallest power of two not below this (positive) number.
    fileprivate var nextPowerOfTwo: Int {
        self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount)
    }
}
