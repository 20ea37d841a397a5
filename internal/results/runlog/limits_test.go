package runlog

// Points is, for tests, the most interval points a results file keeps for a phase of
// ops operations: MaxIntervals, or fewer when the phase has so many
// operations that MaxIntervals points of all of them would pass PointCells
// operation entries, but never fewer than 2. It is even, so that pairs of
// points merge without a remainder. A phase's results thus hold at most
// Points(ops) × ops interval entries, however long it ran, and a phase of
// fewer intervals than Points keeps every one.
func Points(ops int) int { return defaultLimits().points(ops) }

// PointBytes is about the most a phase's interval points take in the
// results file: 4 MiB, or 8 KiB per operation for a phase of more than 512
// operations (so that it keeps a few points of each). Each time the points
// (an even number of them) pass it, adjacent pairs are merged: a merged
// histogram is smaller than its two halves, so the points of a long run
// with wide latency histograms stay near this size instead of growing
// with each merge's longer points.
func PointBytes(ops int) int { return defaultLimits().bytes(ops) }
