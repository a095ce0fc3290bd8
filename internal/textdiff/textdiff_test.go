package textdiff

import "testing"

func TestFirstLine(t *testing.T) {
	for _, c := range []struct{ want, got, out string }{
		{"a\nb", "a\nb", "(equal)"},
		{"a\nb", "a\nc", "line 2:\n  want \"b\"\n  got  \"c\""},
		{"a", "a\nextra", "line 2:\n  want \"\"\n  got  \"extra\""},
	} {
		if out := FirstLine(c.want, c.got); out != c.out {
			t.Errorf("FirstLine(%q, %q) = %q, want %q", c.want, c.got, out, c.out)
		}
	}
}
