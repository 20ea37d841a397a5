package report

import "testing"

// Helpers of the in-package browser test, for the browser tests of real
// runs in package report_test (which may import the commands; this package
// may not, since they import it).

// FindBrowser returns a headless Chromium, or skips the test (see
// findBrowser).
func FindBrowser(t *testing.T) string { return findBrowser(t) }

// ArtifactDir is where a test leaves its report and screenshots.
func ArtifactDir(t *testing.T) string { return artifactDir(t) }

// Screenshot draws url into shot and checks the picture is not blank.
func Screenshot(t *testing.T, browser, url, shot, size string) {
	screenshot(t, browser, url, shot, size)
}

// Chromium runs the headless, network-less Chromium and returns stdout.
func Chromium(t *testing.T, browser string, args ...string) string {
	return chromium(t, browser, args...)
}
