/// Issues strictly increasing `HybridTimestamp`s from a wall clock that may stall or step back.
struct HybridLogicalClock {
    /// The last timestamp issued or observed.
    private(set) var last: HybridTimestamp
    private let wallMilliseconds: @Sendable () -> UInt64

    package init(last: HybridTimestamp, wallMilliseconds: @escaping @Sendable () -> UInt64) {
        self.last = last
        self.wallMilliseconds = wallMilliseconds
    }

    /// A timestamp above every one issued or observed so far.
    mutating func tick() -> HybridTimestamp {
        let wall = HybridTimestamp(milliseconds: wallMilliseconds(), counter: 0)
        last = wall > last ? wall : HybridTimestamp(rawValue: last.rawValue + 1)
        return last
    }

    /// A timestamp above every one issued or observed so far, and above `floor` (the version a
    /// write replaces). A floor ahead of the clock, which only a peer's clock far in the future
    /// can set, lifts this one stamp without moving the clock, so it cannot drag later ones along.
    mutating func tick(above floor: HybridTimestamp) -> HybridTimestamp {
        let stamp = tick()
        return stamp > floor ? stamp : floor.successor
    }

    /// Moves the clock past a timestamp received from another replica.
    mutating func observe(_ remote: HybridTimestamp) {
        if remote > last { last = remote }
    }
}
