package browsertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeJS is axe-core (github.com/dequelabs/axe-core), from its npm package:
// see axe/README.
//
//go:embed axe/axe.min.js
var axeJS string

// Violation is a rule axe-core found broken on a page, with the elements.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for i, n := range v.Nodes {
		if i == 3 {
			fmt.Fprintf(&b, "\n    … and %d more", len(v.Nodes)-3)
			break
		}
		fmt.Fprintf(&b, "\n    %v %s", n.Target, shorten(n.HTML, 160))
	}
	return b.String()
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Axe runs axe-core's WCAG 2.2 A and AA rules (and its best practices) on
// the tab's page as it is now, and fails the test for each violation,
// naming what: the page name says which page or state was checked.
func Axe(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	vs, err := AxeViolations(ctx)
	if err != nil {
		t.Fatalf("axe on %s: %v", page, err)
	}
	for _, v := range vs {
		t.Errorf("axe on %s: %s", page, v)
	}
}

// AxeViolations runs axe-core on the tab's page and returns what it found.
func AxeViolations(ctx context.Context) ([]Violation, error) {
	// Evaluated through the DevTools protocol, which the page's CSP does
	// not govern (a script element would be refused by script-src 'self').
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe !== 'undefined'`))
	if err != nil {
		return nil, fmt.Errorf("inject axe: %w", err)
	}
	if !loaded {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeJS+";\ntrue")); err != nil {
			return nil, fmt.Errorf("inject axe: %w", err)
		}
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']}, resultTypes: ['violations']})`+
		`.then(function (r) { return JSON.stringify(r.violations); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("run axe: %w", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		return nil, fmt.Errorf("axe's answer: %w", err)
	}
	return vs, nil
}
