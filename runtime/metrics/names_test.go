package metrics

import (
	"slices"
	"testing"
)

func TestLabelNames(t *testing.T) {
	for _, c := range []struct {
		keys []string
		hist bool
		want []string
	}{
		{[]string{"reason", "dev"}, false, []string{"reason", "dev"}},
		{[]string{"args.saddr", "$location", "ksym(args.location)"}, false, []string{"saddr", "location", "ksym_location"}},
		{[]string{"skb->dev->name", "$t.0", "(sport)"}, false, []string{"skb_dev_name", "t_0", "sport"}},
		{[]string{"1", `"a"`, "-1"}, false, []string{"key1", "key2", "key3"}},
		{[]string{"dev", "dev", "$dev"}, false, []string{"dev", "dev_2", "dev_3"}},
		{[]string{"le", "__name__"}, true, []string{"le_key", "key__name__"}},
		{[]string{"le"}, false, []string{"le"}},
		{[]string{"reason", "rule(reason, netns, dev, l4proto, saddr, sport, daddr, dport)"}, false, []string{"reason", "rule"}},
	} {
		if got := labelNames(c.keys, c.hist); !slices.Equal(got, c.want) {
			t.Errorf("labelNames(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

func TestMetricName(t *testing.T) {
	for name, want := range map[string]string{"drops": "skbtrace_drops_total", "": "skbtrace_map_total", "_x": "skbtrace__x_total"} {
		if got := metricName(name, "_total"); got != want {
			t.Errorf("metricName(%q) = %q, want %q", name, got, want)
		}
	}
}
