package ingest

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Bar is the progress bar of ingests and fetches (index/fetch draws its
// blocks with it): one line, redrawn with \r at most ten times a second
// and when the count reaches the total, ended by Done:
//
//	[==========>         ] 12/26 inputs  149 tx  1234 tx/s  eta 3s
//	[=========>          ] 45/100 blocks  12.3/s  eta 4s
//
// The first form counts transactions too (an ingest: SetTx), the second
// only its unit. A nil *Bar draws nothing.
type Bar struct {
	w      io.Writer
	unit   string
	total  int
	n, tx  int
	withTx bool
	start  time.Time
	last   time.Time
	drawn  bool // the line shows n and tx as they are
}

// NewBar starts a bar counting total units (inputs, blocks) on w; nil
// when w is nil.
func NewBar(w io.Writer, total int, unit string) *Bar {
	if w == nil {
		return nil
	}
	return &Bar{w: w, unit: unit, total: total, start: time.Now()}
}

// Add counts k more units.
func (b *Bar) Add(k int) {
	if b != nil {
		b.set(b.n+k, b.tx)
	}
}

// SetTx sets the units done and the transactions done (and shows the
// transactions from now on).
func (b *Bar) SetTx(n, tx int) {
	if b != nil {
		b.withTx = true
		b.set(n, tx)
	}
}

func (b *Bar) set(n, tx int) {
	if n != b.n || tx != b.tx {
		b.drawn = false
	}
	b.n, b.tx = n, tx
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond || b.n == b.total {
		b.last = now
		b.draw()
	}
}

func (b *Bar) draw() {
	b.drawn = true
	el := time.Since(b.start).Seconds()
	rate, what := 0.0, b.n
	if b.withTx {
		what = b.tx
	}
	if el > 0 {
		rate = float64(what) / el
	}
	if b.total <= 0 {
		fmt.Fprintf(b.w, "\r%d %s  %d tx  %.0f tx/s   ", b.n, b.unit, b.tx, rate)
		return
	}
	const width = 30
	filled := min(width*b.n/b.total, width)
	s := strings.Repeat("=", filled)
	if filled < width {
		s += ">" + strings.Repeat(" ", width-filled-1)
	}
	eta := "-"
	if b.n > 0 && b.n < b.total {
		eta = (time.Duration(el*float64(b.total-b.n)/float64(b.n)) * time.Second).Round(time.Second).String()
	}
	if b.withTx {
		fmt.Fprintf(b.w, "\r[%s] %d/%d %s  %d tx  %.0f tx/s  eta %s   ", s, b.n, b.total, b.unit, b.tx, rate, eta)
	} else {
		fmt.Fprintf(b.w, "\r[%s] %d/%d %s  %.1f/s  eta %s   ", s, b.n, b.total, b.unit, rate, eta)
	}
}

// Done draws the line as it ends (unless it shows that already) and ends
// it: with " stopped" unless ok.
func (b *Bar) Done(ok bool) {
	if b == nil {
		return
	}
	if !b.drawn {
		b.draw()
	}
	if ok {
		fmt.Fprintln(b.w)
	} else {
		fmt.Fprintln(b.w, " stopped")
	}
}
