// Package schedule is the scheduling arithmetic of open-loop load: when each
// operation of a phase is due, how a ramping rate or a ramping number of
// workers evolves over a phase, and how an adaptive controller moves a
// background job's rate with the latency it observes. It does no I/O and
// starts no goroutines; the engine owns the clock and the workers.
//
// # Why due times are computed from the phase's start
//
// The obvious way to hold a rate is a throttle per worker: each worker waits
// for a time.Tick (or sleeps for the period) and then sends its operation.
// That design has two flaws that make its results wrong in the cases that
// matter most.
//
// It drifts. Every wake-up is a little late (timer slack, scheduling, the
// time spent sending), and a period measured from the previous wake-up adds
// those errors up, so after a few minutes the achieved rate is measurably
// below the target and nothing reports it. A time.Ticker drops ticks that
// its receiver was too busy to take, so a worker stuck on a slow operation
// silently skips the operations it should have sent meanwhile.
//
// It hides coordinated omission. When the server stalls, the throttled
// workers stall with it: they send nothing while they wait, so the
// operations that real, independent clients would have sent during the stall
// are never sent and never measured, and the latency histogram only contains
// the fast periods. The load generator has coordinated with the server it is
// measuring.
//
// Here every operation n has a due time, start + Due(n), computed directly
// from the phase's start (by a [Pacer]) rather than from the previous
// operation. A late wake-up delays only the operation it belongs to; the
// next due time does not move, so the rate cannot drift, however long the
// phase. And because an operation's due time exists independently of when
// the engine actually managed to send it, the engine measures latency from
// the due time: an operation that had to wait for a free worker during a
// stall is recorded with that wait included, as the client that wanted to
// send it then would have experienced it.
//
// Integer rates are computed with exact integer arithmetic and fractional
// rates directly from the operation's number in float64, so a due time is
// within about a nanosecond of the exact value (within float64's relative
// precision for offsets beyond about 50 days) and errors never accumulate.
//
// # Adaptive pacing
//
// Background work (a backfill, a TTL purge, a migration) should run as fast
// as the server can absorb without hurting foreground latency. A
// [PacingConfig] is the controller: at every interval it raises the rate
// while the observed latency stays under a low threshold, holds it between
// the thresholds and cuts it at the high threshold. An [Adaptive] pacer
// applies the changing rate without drift, and a [Trajectory] records the
// intervals so the run can report the highest rate the server sustained.
package schedule
