package fetch

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line bar, redrawn with a carriage return at most
// ten times a second:
//
//	[=========>          ]  45/100 blocks  12.3/s  eta 4s
type progress struct {
	w     io.Writer
	total uint64
	n     uint64
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer, total uint64) *progress {
	return &progress{w: w, total: total, start: time.Now()}
}

func (p *progress) add(k uint64) {
	if p == nil || p.w == nil {
		return
	}
	p.n += k
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond || p.n == p.total {
		p.last = now
		p.draw()
	}
}

func (p *progress) draw() {
	const width = 30
	filled := int(uint64(width) * p.n / max(p.total, 1))
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.n) / el
	}
	eta := "-"
	if rate > 0 && p.n < p.total {
		eta = (time.Duration(float64(p.total-p.n)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s] %d/%d blocks  %.1f/s  eta %s   ", bar, p.n, p.total, rate, eta)
	p.drawn = true
}

// done ends the bar's line.
func (p *progress) done(ok bool) {
	if p == nil || p.w == nil {
		return
	}
	if !p.drawn || p.n != p.total {
		p.draw()
	}
	if ok {
		fmt.Fprintf(p.w, "\n")
	} else {
		fmt.Fprintf(p.w, " stopped\n")
	}
}
