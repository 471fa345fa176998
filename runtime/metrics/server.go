package metrics

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// Server serves /metrics on a listening socket, over plain HTTP or as a
// web configuration file says (TLS, client certificates, basic auth).
type Server struct {
	ln  net.Listener
	srv *http.Server
	reg *prometheus.Registry
	web *WebConfig
	// warn reports what goes wrong while serving (a failed TLS handshake,
	// a web configuration file that no longer reads), a line each.
	warn func(format string, args ...any)
	// mu is held for reading by every scrape of the session's metrics, and
	// for writing by Close, which sets closed: once Close returns nothing
	// reads the maps, which the session may then free.
	mu     sync.RWMutex
	closed bool
}

// gated is a collector that collects nothing once its server is closed.
type gated struct {
	prometheus.Collector
	s *Server
}

func (g gated) Collect(ch chan<- prometheus.Metric) {
	g.s.mu.RLock()
	defer g.s.mu.RUnlock()
	if !g.s.closed {
		g.Collector.Collect(ch)
	}
}

// Listen opens addr (:9464, 127.0.0.1:9464, [::1]:9464) for Serve over
// plain HTTP. It is done before anything attaches, so that a bad address or
// a port in use ends skbtrace at once; the error says which, in one line.
func Listen(addr string) (*Server, error) {
	return ListenWeb(addr, nil, nil)
}

// ListenWeb is Listen for a server that serves as wc says (nil: plain
// HTTP, no authentication), reporting through warn (nil: nowhere) what
// goes wrong once serving. Load wc with LoadWebConfig first, so that a bad
// file ends skbtrace before anything attaches too.
func ListenWeb(addr string, wc *WebConfig, warn func(format string, args ...any)) (*Server, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--metrics takes HOST:PORT or :PORT, such as :9464 or 127.0.0.1:9464, not %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("--metrics %s: the port is in use: stop what listens there or choose another port", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, fmt.Errorf("--metrics %s: no interface of this host has that address", addr)
	case errors.Is(err, syscall.EACCES):
		return nil, fmt.Errorf("--metrics %s: not permitted to listen on that port", addr)
	case err != nil:
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return nil, fmt.Errorf("--metrics %s: unknown host %q", addr, dns.Name)
		}
		return nil, fmt.Errorf("--metrics %s: %v", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if warn == nil {
		warn = func(string, ...any) {}
	}
	return &Server{ln: ln, reg: reg, web: wc, warn: warn}, nil
}

// Addr is the address the server listens on (the port chosen, for :0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is where Prometheus scrapes: http:// or https://, the address, /metrics.
func (s *Server) URL() string { return s.web.Scheme() + "://" + s.ln.Addr().String() + "/metrics" }

// Describe says how scrapes are secured (WebConfig.Describe).
func (s *Server) Describe() string { return s.web.Describe() }

// Register adds the script's maps and skbtrace's own metrics.
func (s *Server) Register(c *Collector, self Self) error {
	if err := s.reg.Register(gated{newSelfCollector(self), s}); err != nil {
		return err
	}
	return s.reg.Register(gated{c, s})
}

// Serve serves /metrics (the Prometheus text format, or OpenMetrics where
// the scraper asks for it) until Close. A map that cannot be read gives
// its error in the scrape, the rest still served. With a web configuration
// file the exporter-toolkit serves it, as node_exporter's: TLS and client
// certificates as its tls_server_config says, every request checked against
// basic_auth_users (401 without the right name and password).
func (s *Server) Serve() {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	logw := warnLines(s.warn)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(logw, "", 0)}
	if s.web == nil {
		go s.srv.Serve(s.ln)
		return
	}
	path := s.web.Path
	flags := &web.FlagConfig{WebConfigFile: &path}
	go func() {
		err := web.Serve(s.ln, s.srv, flags, toolkitLogger(logw))
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.warn("metrics: no longer serving: %v", oneLine(err.Error()))
		}
	}()
}

// Close stops serving, a few seconds at most after the scrapes under way,
// and returns once none reads the session's maps.
func (s *Server) Close() {
	s.mu.RLock()
	done := s.closed
	s.mu.RUnlock()
	if done {
		return
	}
	if s.srv == nil {
		s.ln.Close()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s.srv.Shutdown(ctx) != nil {
			s.srv.Close()
		}
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}
