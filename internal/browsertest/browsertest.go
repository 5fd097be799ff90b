// Package browsertest gives tests tabs of one shared headless Chromium (the
// system's), driven through chromedp: the browser tests of the widget and
// the panel click through pages as people do.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var (
	once    sync.Once
	shared  context.Context
	started error
)

// Chromium finds the system Chromium or Chrome ($CHROMIUM first).
func Chromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium or Chrome found: install it (Debian: apt-get install chromium) or set CHROMIUM")
}

// Tab returns a context for a new tab of the shared headless browser, with
// a viewport of width x height CSS pixels and a deadline of two minutes; the
// tab closes when the test ends.
func Tab(t testing.TB, width, height int64) context.Context {
	t.Helper()
	once.Do(func() {
		path, err := Chromium()
		if err != nil {
			started = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1280, 900))
		alloc, _ := chromedp.NewExecAllocator(context.Background(), opts...)
		shared, _ = chromedp.NewContext(alloc)
		started = chromedp.Do(shared) // starts the browser
	})
	if started != nil {
		t.Fatalf("browser: %v", started)
	}
	tab, cancel := chromedp.NewContext(shared)
	t.Cleanup(cancel)
	// The first action opens the tab and ties its life to the context it
	// is given: the tab's own, not the deadline's, so that a step past the
	// deadline still finds the tab open to say where it was.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("browser tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}
