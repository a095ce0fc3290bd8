package planner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// FuzzQuery runs arbitrary text through the whole query path: parse,
// plan, explain and execute against the real test index (the examples
// and a mainnet block), with small limits. Nothing may panic, and every
// failure must be an error with a message.
//
//	go test ./planner -run '^$' -fuzz FuzzQuery -fuzztime 60s
func FuzzQuery(f *testing.F) {
	files, _ := filepath.Glob("../examples/queries/*.fq")
	files = append(files, "../examples/tour.fq")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
		for _, st := range strings.Split(string(b), ";") {
			if s := strings.TrimSpace(st); s != "" {
				f.Add(s)
			}
		}
	}
	cfg := normalform.DefaultConfig()
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		sts, err := lang.Parse("f", src)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("parse error without a message")
			}
			return
		}
		for _, st := range sts {
			q, err := (&Planner{Cfg: cfg}).Build(st)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("plan error without a message")
				}
				continue
			}
			_ = Explain(q.Plan)
			x := &Executor{Src: testIndex, Cfg: cfg, Timeout: 5 * time.Second, MaxRows: 50}
			err = x.Run(context.Background(), q, func(r Row) error {
				for _, fld := range r {
					_ = fld.Value + fld.Human
				}
				return nil
			})
			var le *LimitError
			if err != nil && err.Error() == "" && !errors.As(err, &le) {
				t.Fatal("run error without a message")
			}
		}
	})
}
