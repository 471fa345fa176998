package metrics

import (
	"io"
	"log/slog"
	"strings"
)

// warnLines is an io.Writer that turns what net/http and the
// exporter-toolkit log (a failed TLS handshake, a web configuration file
// that no longer reads) into the warn function's lines, "metrics: " before
// each.
type warnLines func(format string, args ...any)

func (w warnLines) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			w("metrics: %s", l)
		}
	}
	return len(p), nil
}

// toolkitLogger is the exporter-toolkit's logger: its warnings and errors
// on w, without the time (skbtrace's lines carry none); its notes that it
// listens and whether TLS is on are left out, serveMetrics says as much.
func toolkitLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
