//go:build !linux

package alarm

// newPlatform returns the portable alarm. The millisecond rounding it works
// around is that of the runtime's epoll wait on Linux; elsewhere the
// runtime's timers are used as they are (their precision there has not
// been measured).
func newPlatform() (Alarm, error) {
	return NewTimer(), nil
}
