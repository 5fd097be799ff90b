// Temporary outside-try driver (to be deleted).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

type step struct {
	Op   string `json:"op"`
	URL  string `json:"url"`
	Sel  string `json:"sel"`
	Val  string `json:"val"`
	JS   string `json:"js"`
	File string `json:"file"`
	W    int64  `json:"w"`
	H    int64  `json:"h"`
	Ms   int    `json:"ms"`
}

func main() {
	var steps []step
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &steps); err != nil {
		panic(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("chromium"), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	ctx, cancel3 := context.WithTimeout(ctx, 180*time.Second)
	defer cancel3()
	if err := chromedp.Do(ctx); err != nil {
		panic(err)
	}
	for i, s := range steps {
		sctx, c := context.WithTimeout(ctx, 20*time.Second)
		var err error
		switch s.Op {
		case "size":
			err = chromedp.Do(sctx, chromedp.EmulateViewport(s.W, s.H))
		case "nav":
			err = chromedp.Do(sctx, chromedp.Navigate(s.URL))
		case "wait":
			err = chromedp.Do(sctx, chromedp.WaitVisible(chromedp.CSS(s.Sel)))
		case "click":
			err = chromedp.Do(sctx, chromedp.Click(chromedp.CSS(s.Sel), chromedp.NodeVisible))
		case "type":
			err = chromedp.Do(sctx, chromedp.SendKeys(chromedp.CSS(s.Sel), s.Val))
		case "sleep":
			time.Sleep(time.Duration(s.Ms) * time.Millisecond)
		case "eval":
			var out any
			out, err = chromedp.Run(sctx, chromedp.Evaluate[any](s.JS, chromedp.EvalAwaitPromise))
			bs, _ := json.Marshal(out)
			fmt.Printf("[%d eval] %s\n", i, bs)
		case "text":
			var t string
			t, err = chromedp.Run(sctx, chromedp.Text(chromedp.CSS(s.Sel), chromedp.NodeVisible))
			fmt.Printf("[%d text %s] %s\n", i, s.Sel, strings.TrimSpace(t))
		case "shot":
			var buf []byte
			buf, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
			if err == nil {
				err = os.WriteFile(s.File, buf, 0o644)
				fmt.Printf("[%d shot] %s\n", i, s.File)
			}
		default:
			panic("op " + s.Op)
		}
		c()
		if err != nil {
			fmt.Printf("[%d %s %s] ERROR %v\n", i, s.Op, s.Sel, err)
			if s.Op != "eval" && s.Op != "text" {
				os.Exit(1)
			}
		}
	}
}
