package kernel

import "testing"

func TestReleaseVersion(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    [2]int
		ok      bool
	}{
		{"6.18.0", [2]int{6, 18}, true},
		{"6.12.38+deb13-amd64", [2]int{6, 12}, true},
		{"6.1.0-37-amd64", [2]int{6, 1}, true},
		{"5.15.0-91-generic", [2]int{5, 15}, true},
		{"6.10-rc1", [2]int{6, 10}, true},
		{"6", [2]int{}, false},
		{"x.y", [2]int{}, false},
	} {
		got, ok := releaseVersion(tc.release)
		if got != tc.want || ok != tc.ok {
			t.Errorf("releaseVersion(%q) = %v, %v; want %v, %v", tc.release, got, ok, tc.want, tc.ok)
		}
	}
}
