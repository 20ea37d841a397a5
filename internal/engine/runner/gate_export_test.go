package runner

// get is the gate's wanted concurrency. Only tests read it: the engine sets
// the gate and its workers wait on it.
func (g *gate) get() int {
	g.mu.Lock()
	defer g.mu.Unlock()

	return g.active
}
