package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics on a listening socket.
type Server struct {
	ln  net.Listener
	srv *http.Server
	reg *prometheus.Registry
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

// Listen opens addr (:9464, 127.0.0.1:9464, [::1]:9464) for Serve. It is
// done before anything attaches, so that a bad address or a port in use
// ends skbtrace at once; the error says which, in one line.
func Listen(addr string) (*Server, error) {
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
	return &Server{ln: ln, reg: reg}, nil
}

// Addr is the address the server listens on (the port chosen, for :0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Register adds the script's maps and skbtrace's own metrics.
func (s *Server) Register(c *Collector, self Self) error {
	if err := s.reg.Register(gated{newSelfCollector(self), s}); err != nil {
		return err
	}
	return s.reg.Register(gated{c, s})
}

// Serve serves /metrics (the Prometheus text format, or OpenMetrics where
// the scraper asks for it) until Close. A map that cannot be read gives
// its error in the scrape, the rest still served.
func (s *Server) Serve() {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(s.ln)
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
