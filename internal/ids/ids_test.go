package ids

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New("brf_")
		if !strings.HasPrefix(id, "brf_") || len(id) != len("brf_")+12 {
			t.Fatalf("New = %q", id)
		}
		for _, c := range id[4:] {
			if !strings.ContainsRune(alphabet, c) {
				t.Fatalf("New = %q: %q is not in the alphabet", id, c)
			}
		}
		if seen[id] {
			t.Fatalf("New gave %q twice", id)
		}
		seen[id] = true
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = New("brf_")
	}
}
