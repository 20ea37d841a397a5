package wiretest

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Latency decides how long the server holds a reply. received is when the
// request's last byte arrived, inFlight the number of requests being
// processed at that moment (including this one).
//
// The server calls Delay once per request, from the goroutine serving that
// request's connection, so implementations must be safe for concurrent use.
// The hold is measured from received, not from when Delay returns, so the
// server's own parsing time is absorbed into the delay rather than added to
// it. A zero or negative duration means "reply as soon as possible".
type Latency interface {
	Delay(received time.Time, inFlight int) time.Duration
}

// Fixed returns a Latency that holds every reply for d. Fixed(0) turns the
// server into a null server, which is what harness-overhead calibration
// wants.
func Fixed(d time.Duration) Latency {
	return fixed(d)
}

// fixed is the Latency behind Fixed; it is stateless, so it is trivially
// safe for concurrent use.
type fixed time.Duration

// Delay returns the fixed duration whatever the load.
func (f fixed) Delay(time.Time, int) time.Duration {
	return time.Duration(f)
}

// Uniform returns a Latency whose delays are drawn uniformly from
// [minDelay, maxDelay] by a generator seeded with seed, so that a test or a
// calibration run can be repeated with the same sequence of delays (as far as
// the order in which concurrent requests draw them allows). If maxDelay is
// not above minDelay, every delay is minDelay.
func Uniform(minDelay, maxDelay time.Duration, seed uint64) Latency {
	return &uniform{min: minDelay, max: maxDelay, rng: newRand(seed)}
}

// uniform is the Latency behind Uniform.
type uniform struct {
	min, max time.Duration

	mu  sync.Mutex // guards rng, which is not safe for concurrent use
	rng *rand.Rand
}

// Delay draws the next uniform delay.
func (u *uniform) Delay(time.Time, int) time.Duration {
	if u.max <= u.min {
		return u.min
	}

	span := uint64(u.max-u.min) + 1 // inclusive of maxDelay

	u.mu.Lock()
	off := u.rng.Uint64N(span)
	u.mu.Unlock()

	return u.min + time.Duration(off)
}

// Exponential returns a Latency whose delays are exponentially distributed
// with the given mean, drawn by a generator seeded with seed. Its long tail
// makes it a stand-in for a server with occasional slow requests. A mean of
// zero or less gives zero delays.
func Exponential(mean time.Duration, seed uint64) Latency {
	return &exponential{mean: mean, rng: newRand(seed)}
}

// exponential is the Latency behind Exponential.
type exponential struct {
	mean time.Duration

	mu  sync.Mutex // guards rng, which is not safe for concurrent use
	rng *rand.Rand
}

// Delay draws the next exponential delay.
func (e *exponential) Delay(time.Time, int) time.Duration {
	if e.mean <= 0 {
		return 0
	}

	e.mu.Lock()
	x := e.rng.ExpFloat64()
	e.mu.Unlock()

	d := x * float64(e.mean)
	// The tail is unbounded in theory; saturate instead of letting the
	// conversion overflow into a negative duration.
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}

	return time.Duration(d)
}

// newRand returns a generator determined entirely by seed. The second PCG
// word is derived from the first so that callers only deal with one number.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Stall is a Latency that freezes the server for a window of time, the way a
// real server does during a checkpoint, an election or a stop-the-world
// pause: every request received inside [start, start+For) is answered no
// earlier than start+For (plus Base's delay), and requests received outside
// the window get Base's delay alone. A load generator that suffers from
// coordinated omission under-reports such a stall, which is what the
// scheduler tests look for.
type Stall struct {
	// At is when the window opens. When it is zero, the window opens After
	// the server started instead.
	At time.Time

	// After places the window relative to the server's start when At is
	// zero, so that a Config can describe a stall before the server (and
	// therefore its start time) exists. The Server resolves it when the
	// latency is installed through Start or SetLatency; a Stall used on its
	// own, outside a Server, only honours At.
	After time.Duration

	// For is how long the window lasts; zero or less means no window.
	For time.Duration

	// Base is the latency outside the window, and the extra delay added
	// after the window for requests that fell inside it. Nil means none.
	Base Latency
}

// Delay holds requests received inside the window until it closes.
func (s Stall) Delay(received time.Time, inFlight int) time.Duration {
	var base time.Duration
	if s.Base != nil {
		base = s.Base.Delay(received, inFlight)
	}

	if s.For <= 0 || s.At.IsZero() {
		return base
	}

	end := s.At.Add(s.For)
	if received.Before(s.At) || !received.Before(end) {
		return base
	}

	return end.Sub(received) + base
}

// anchor resolves After against the server's start time, and anchors Base
// too so that nested stalls (a stall whose base is another stall) work.
func (s Stall) anchor(start time.Time) Latency {
	if s.At.IsZero() {
		s.At = start.Add(s.After)
	}

	s.Base = anchorLatency(s.Base, start)

	return s
}

// LoadDependent is a Latency that rises with the number of requests in
// flight: Base + PerInFlight×(inFlight-1). It models a server that
// saturates, which is what a pacing controller must back off from.
type LoadDependent struct {
	// Base is the delay of a request that has the server to itself.
	Base time.Duration

	// PerInFlight is added for every other request being processed at the
	// same time.
	PerInFlight time.Duration
}

// Delay computes the load-dependent delay; it is a pure function of
// inFlight.
func (l LoadDependent) Delay(_ time.Time, inFlight int) time.Duration {
	others := max(inFlight, 1) - 1

	return l.Base + l.PerInFlight*time.Duration(others)
}

// anchorer is implemented by latencies whose schedule is relative to the
// server's start. It is unexported because only the server knows the start
// time, and it resolves the schedule once, when the latency is installed,
// instead of on every request.
type anchorer interface {
	anchor(start time.Time) Latency
}

// anchorLatency resolves l's start-relative schedule, if it has one.
func anchorLatency(l Latency, start time.Time) Latency {
	if a, ok := l.(anchorer); ok {
		return a.anchor(start)
	}

	return l
}
