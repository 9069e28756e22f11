// Command https-serve is Go's crypto/tls and net/http as one of
// tls-bench's HTTPS servers: it takes https-serve's command line and
// speaks its protocol with the tools (crates/sockets/src/child.rs): --list,
// --probe answering `supported` or `unsupported: <why>`, the parameter
// options, a first line `serving ... on ADDR`, and on SIGINT or SIGTERM a
// summary written as JSON to --json (tls_bench_results::sockets::ServerSummary).
// Every GET is answered `200 OK` with --body bytes of the harness's
// pattern (tls_bench_harness::workload::pattern); each connection's
// negotiated version, suite, group, resumption and client authentication
// are checked at its first request. With --echo it is instead an echo
// server (`serve`'s protocol, for `compare --sockets`): every byte read is
// written back, each connection checked after its handshake. docs/https.md, "Other runtimes", says
// what it counts and what it cannot.
//
// Built by the tools (tls_bench_sockets::runtimes) with
// `-ldflags -X main.certsDir=<the repository's certs/>`.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// certsDir is the repository's certs/, set at build time;
// TLS_BENCH_CERTS_DIR replaces it at run time, as for the other servers
// (tls_bench_harness::certs::CERTS_DIR_ENV).
var certsDir = ""

// chainsDir is where the chain directories are.
func chainsDir() string {
	if dir := os.Getenv("TLS_BENCH_CERTS_DIR"); dir != "" {
		return dir
	}
	return certsDir
}

// serverName is the name the certificates are for
// (tls_bench_harness::certs::SERVER_NAME): a ClientHello naming another
// host is refused, as the other servers do.
const serverName = "localhost"

// rssInterval is how often RSS is sampled (tls_bench_sockets::serve::RSS_INTERVAL).
const rssInterval = time.Second

// maxExamples is how many failures' messages the summary keeps.
const maxExamples = 5

// library is this server's library name: go-crypto-tls-<Go's version>.
func library() string {
	return "go-crypto-tls-" + strings.TrimPrefix(runtime.Version(), "go")
}

// params is one parameter set, as tls_bench_harness::params::Params.
type params struct {
	kind      string // server-auth, mTLS, resumption
	suite     uint16
	suiteName string
	tls13     bool
	ecdsa     bool // a TLS 1.2 suite's authentication
	group     tls.CurveID
	groupName string
	cert      string // RSA-2048 ...
	certDir   string // rsa2048 ...
}

// protocol is the suite's version, as tls-bench names it.
func (p params) protocol() string {
	if p.tls13 {
		return "TLSv1.3"
	}
	return "TLSv1.2"
}

// id is the parameter set's text (Params's Display).
func (p params) id() string {
	return strings.Join([]string{p.kind, p.protocol(), p.suiteName, p.groupName, p.cert}, ",")
}

var kinds = []string{"server-auth", "mTLS", "resumption"}

var groups = map[string]tls.CurveID{
	"x25519":         tls.X25519,
	"secp256r1":      tls.CurveP256,
	"secp384r1":      tls.CurveP384,
	"X25519MLKEM768": tls.X25519MLKEM768,
}

var chains = map[string]string{
	"RSA-2048":   "rsa2048",
	"RSA-3072":   "rsa3072",
	"RSA-4096":   "rsa4096",
	"ECDSA-P256": "ecdsa-p256",
	"ECDSA-P384": "ecdsa-p384",
}

// suites are the suites tls-bench names (IANA) that crypto/tls has.
var suites = []string{
	"TLS_AES_128_GCM_SHA256",
	"TLS_AES_256_GCM_SHA384",
	"TLS_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
}

// fold finds value among names, ignoring case; the error names what is valid.
func fold(what, value string, names []string) (string, error) {
	for _, n := range names {
		if strings.EqualFold(n, value) {
			return n, nil
		}
	}
	return "", fmt.Errorf("--%s %q: valid values are %s", what, value, strings.Join(names, ", "))
}

func keys(m map[string]string) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

// parseParams reads the parameter options.
func parseParams(kind, suite, group, cert string) (params, error) {
	var p params
	var err error
	if p.kind, err = fold("kind", kind, kinds); err != nil {
		return p, err
	}
	if p.suiteName, err = fold("suite", suite, suites); err != nil {
		return p, err
	}
	ids := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		ids[s.Name] = s.ID
	}
	id, ok := ids[p.suiteName]
	if !ok {
		return p, fmt.Errorf("--suite %s: crypto/tls %s has no such suite", p.suiteName, runtime.Version())
	}
	p.suite = id
	p.tls13 = !strings.HasPrefix(p.suiteName, "TLS_ECDHE_")
	p.ecdsa = strings.HasPrefix(p.suiteName, "TLS_ECDHE_ECDSA_")
	groupNames := []string{"x25519", "secp256r1", "secp384r1", "X25519MLKEM768"}
	if p.groupName, err = fold("group", group, groupNames); err != nil {
		return p, err
	}
	p.group = groups[p.groupName]
	if p.cert, err = fold("cert", cert, []string{"RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256", "ECDSA-P384"}); err != nil {
		return p, err
	}
	p.certDir = chains[p.cert]
	return p, nil
}

// unsupported is a parameter set crypto/tls cannot serve: a named skip.
type unsupported struct{ why string }

func (u unsupported) Error() string { return u.why }

// config is the server's TLS configuration for p. Errors: unsupported
// (the why), or the certificates cannot be read.
func config(p params) (*tls.Config, error) {
	if !p.tls13 && p.group == tls.X25519MLKEM768 {
		return nil, unsupported{"crypto/tls offers X25519MLKEM768 in TLS 1.3 only"}
	}
	if !p.tls13 && p.ecdsa != strings.HasPrefix(p.cert, "ECDSA") {
		return nil, unsupported{fmt.Sprintf("%s needs a certificate of its own key type, not %s", p.suiteName, p.cert)}
	}
	dir := filepath.Join(chainsDir(), p.certDir)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "server-chain.pem"), filepath.Join(dir, "server-key.pem"))
	if err != nil {
		return nil, fmt.Errorf("reading the %s chain under %s: %w", p.cert, dir, err)
	}
	version := uint16(tls.VersionTLS12)
	if p.tls13 {
		version = tls.VersionTLS13
	}
	c := &tls.Config{
		Certificates:     []tls.Certificate{pair},
		MinVersion:       version,
		MaxVersion:       version,
		CurvePreferences: []tls.CurveID{p.group},
		NextProtos:       []string{"http/1.1"},
		// One ticket for resumption, none otherwise, as the other servers.
		SessionTicketsDisabled: p.kind != "resumption",
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			if hello.ServerName != "" && hello.ServerName != serverName {
				return nil, fmt.Errorf("the client asked for host %q, not %s", hello.ServerName, serverName)
			}
			return nil, nil
		},
	}
	// TLS 1.3's suites cannot be restricted in crypto/tls: the client
	// offers only the one asked for, and the check reads back which ran.
	if !p.tls13 {
		c.CipherSuites = []uint16{p.suite}
	}
	if p.kind == "mTLS" {
		ca, err := os.ReadFile(filepath.Join(dir, "ca-cert.pem"))
		if err != nil {
			return nil, fmt.Errorf("reading the %s CA: %w", p.cert, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s/ca-cert.pem holds no certificate", dir)
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// check compares what a connection negotiated with p, as
// tls_bench_sockets::check_server: a resumption run's first, full
// handshake is checked as server-auth. Returns whether it resumed.
func check(cs *tls.ConnectionState, p params) (bool, error) {
	wanted := p.kind
	if wanted == "resumption" && !cs.DidResume {
		wanted = "server-auth"
	}
	var wrong []string
	version := uint16(tls.VersionTLS12)
	if p.tls13 {
		version = tls.VersionTLS13
	}
	if cs.Version != version {
		wrong = append(wrong, fmt.Sprintf("protocol %s (wanted %s)", tls.VersionName(cs.Version), p.protocol()))
	}
	if cs.CipherSuite != p.suite {
		wrong = append(wrong, fmt.Sprintf("suite %s (wanted %s)", tls.CipherSuiteName(cs.CipherSuite), p.suiteName))
	}
	if !(wanted == "resumption" && !p.tls13) && cs.CurveID != p.group {
		wrong = append(wrong, fmt.Sprintf("group %s (wanted %s)", cs.CurveID, p.groupName))
	}
	if cs.DidResume != (wanted == "resumption") {
		wrong = append(wrong, fmt.Sprintf("resumed %t (wanted %t)", cs.DidResume, wanted == "resumption"))
	}
	if auth := len(cs.PeerCertificates) > 0; auth != (wanted == "mTLS") {
		wrong = append(wrong, fmt.Sprintf("client authenticated %t (wanted %t)", auth, wanted == "mTLS"))
	}
	if len(wrong) > 0 {
		return false, fmt.Errorf("negotiated %s", strings.Join(wrong, ", "))
	}
	return cs.DidResume, nil
}

// pattern is tls_bench_harness::workload::pattern: the body every GET is
// answered with, which the client checks byte for byte.
func pattern(n int) []byte {
	x := uint64(0x9E3779B97F4A7C15)
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x)
	}
	return out
}

// server is the running server's counters.
type server struct {
	p           params
	body        []byte
	max         int64
	idleTimeout time.Duration
	connections atomic.Uint64
	active      atomic.Int64
	overLimit   atomic.Uint64
	full        atomic.Uint64
	resumed     atomic.Uint64
	idleClosed  atomic.Uint64
	requests    atomic.Uint64
	bytesRecv   atomic.Uint64
	bytesSent   atomic.Uint64
	mu          sync.Mutex
	errors      map[string]uint64
	examples    []string
}

// fail counts a failed connection of kind (tls_bench_results::sockets::ErrorKind's name).
func (s *server) fail(kind, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors[kind]++
	if len(s.examples) < maxExamples {
		s.examples = append(s.examples, kind+": "+message)
	}
}

// connKey keys a connection's state in its requests' context.
type connKey struct{}

// conn is one connection's state: checked at its first request.
type conn struct {
	checked, bad bool
	state        http.ConnState
	since        time.Time
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := r.Context().Value(connKey{}).(*conn)
	if !c.checked {
		c.checked = true
		resumed, err := check(r.TLS, s.p)
		switch {
		case err != nil:
			c.bad = true
			s.fail("negotiated", err.Error())
		case resumed:
			s.resumed.Add(1)
		default:
			s.full.Add(1)
		}
	}
	if c.bad {
		panic(http.ErrAbortHandler)
	}
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(s.body); err != nil {
		return
	}
	s.requests.Add(1)
	s.bytesSent.Add(uint64(len(s.body)))
}

// echo serves one connection of --echo: its handshake within
// handshakeTimeout, checked, then every byte read written back until the
// client's close_notify (answered with ours), an idle timeout (counted
// idle-closed) or a failure (counted by kind).
func (s *server) echo(raw net.Conn, config *tls.Config, handshakeTimeout time.Duration) {
	defer raw.Close()
	c := tls.Server(raw, config)
	raw.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := c.Handshake(); err != nil {
		s.fail(errorKind(err), "TLS handshake error from "+raw.RemoteAddr().String()+": "+err.Error())
		return
	}
	cs := c.ConnectionState()
	resumed, err := check(&cs, s.p)
	switch {
	case err != nil:
		s.fail("negotiated", err.Error())
		return
	case resumed:
		s.resumed.Add(1)
	default:
		s.full.Add(1)
	}
	raw.SetDeadline(time.Time{})
	buf := make([]byte, 64*1024)
	// The read deadline is moved when half the idle timeout has passed,
	// not on every read.
	armed := time.Time{}
	var received, sent uint64
	account := func() {
		s.bytesRecv.Add(received)
		s.bytesSent.Add(sent)
		received, sent = 0, 0
	}
	defer account()
	for {
		if now := time.Now(); now.Sub(armed) > s.idleTimeout/2 {
			raw.SetReadDeadline(now.Add(s.idleTimeout))
			armed = now
		}
		n, err := c.Read(buf)
		received += uint64(n)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				s.fail(errorKind(werr), "echoing: "+werr.Error())
				return
			}
			sent += uint64(n)
		}
		var ne net.Error
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			// Counted before the close_notify and FIN: the client waits
			// for them, and may stop the server as soon as they arrive.
			account()
			c.Close()
			return
		case errors.As(err, &ne) && ne.Timeout():
			s.idleClosed.Add(1)
			return
		default:
			s.fail(errorKind(err), "reading: "+err.Error())
			return
		}
	}
}

// errorKind is a failure's kind (tls_bench_results::sockets::ErrorKind's name).
func errorKind(err error) string {
	var ne net.Error
	switch text := err.Error(); {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(text, "connection reset"), strings.Contains(text, "broken pipe"):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "closed"
	}
	return "handshake"
}

// limited closes a connection accepted while --max-connections are open
// (counted over_limit), and counts every accept.
type limited struct {
	net.Listener
	s *server
}

func (l limited) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.s.connections.Add(1)
		if l.s.active.Add(1) > l.s.max {
			l.s.active.Add(-1)
			l.s.overLimit.Add(1)
			c.Close()
			continue
		}
		return &slot{Conn: c, s: l.s}, nil
	}
}

// slot is an accepted connection holding one of the --max-connections.
type slot struct {
	net.Conn
	once sync.Once
	s    *server
}

func (c *slot) Close() error {
	c.once.Do(func() { c.s.active.Add(-1) })
	return c.Conn.Close()
}

// handshakeLog counts the handshake failures net/http logs, by kind, and
// notes the peers' addresses (a failed handshake is not an idle close).
type handshakeLog struct {
	s      *server
	failed *sync.Map
}

func (h handshakeLog) Write(b []byte) (int, error) {
	line := strings.TrimSpace(string(b))
	if i := strings.Index(line, "http: TLS handshake error from "); i >= 0 {
		message := line[i+len("http: "):]
		if from := strings.TrimPrefix(message, "TLS handshake error from "); from != message {
			if colon := strings.Index(from, ": "); colon > 0 {
				h.failed.Store(from[:colon], true)
			}
		}
		kind := "handshake"
		switch {
		case strings.Contains(message, "i/o timeout"):
			kind = "timeout"
		case strings.Contains(message, "connection reset"), strings.Contains(message, "broken pipe"):
			kind = "reset"
		case strings.HasSuffix(message, ": EOF"):
			kind = "closed"
		}
		h.s.fail(kind, message)
	}
	return len(b), nil
}

// rss is this process's resident set, KiB (/proc/self/statm).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize()) / 1024
}

// pin sets every thread of this process to cores (new threads inherit it).
func pin(cores []int) error {
	var mask [16]uint64
	for _, c := range cores {
		if c < 0 || c >= 64*len(mask) {
			return fmt.Errorf("--cores %d: not a core of this machine", c)
		}
		mask[c/64] |= 1 << (c % 64)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask[0])))
		if e != 0 {
			return fmt.Errorf("pinning to cores %v: %v", cores, e)
		}
	}
	return nil
}

// checkJSON makes sure the summary can be written to path before any
// work, as the other servers do: its directory is created, and a file not
// there before is not left behind.
func checkJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// cpuSeconds is the process's user and system CPU.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// fatal prints `error: ...` and exits with code.
func fatal(code int, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", a...)
	os.Exit(code)
}

func main() {
	flags := flag.NewFlagSet("https-serve", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	list := flags.Bool("list", false, "list the library and exit")
	probe := flags.Bool("probe", false, "print supported or unsupported: <why> and exit")
	lib := flags.String("library", "", "the library: go-crypto-tls")
	kind := flags.String("kind", "server-auth", "server-auth, mTLS or resumption")
	suite := flags.String("suite", "TLS_AES_128_GCM_SHA256", "the cipher suite (IANA name)")
	group := flags.String("group", "x25519", "the key exchange group")
	cert := flags.String("cert", "ECDSA-P256", "the certificate chain")
	listen := flags.String("listen", "127.0.0.1:4433", "address to listen on")
	threads := flags.Int("threads", runtime.NumCPU(), "GOMAXPROCS")
	coresArg := flags.String("cores", "", "cores to pin the process to, comma-separated")
	body := flags.Int("body", 1024, "bytes of the body every GET is answered with")
	maxConns := flags.Int("max-connections", 10000, "connections served at once")
	handshakeTimeout := flags.Duration("handshake-timeout", 10*time.Second, "longest a handshake may take (--echo; net/http's header timeout bounds it otherwise)")
	echo := flags.Bool("echo", false, "echo every byte back instead of answering HTTP")
	idle := flags.Duration("idle-timeout", 60*time.Second, "longest a connection may idle or take to send a header")
	jsonPath := flags.String("json", "", "write the summary as JSON to this file")
	if err := flags.Parse(os.Args[1:]); err != nil {
		fatal(2, "%v", err)
	}
	if *list {
		fmt.Println(library())
		return
	}
	if *lib != "go-crypto-tls" && *lib != library() {
		fatal(2, "--library %q: this server has only %s (go-crypto-tls)", *lib, library())
	}
	p, err := parseParams(*kind, *suite, *group, *cert)
	if err != nil {
		fatal(2, "%v", err)
	}
	tlsConfig, err := config(p)
	var why unsupported
	if *probe {
		switch {
		case errors.As(err, &why):
			fmt.Printf("unsupported: %s\n", why.why)
		case err != nil:
			fatal(1, "%s %s: %v", library(), p.id(), err)
		default:
			fmt.Println("supported")
		}
		return
	}
	if err != nil {
		fatal(1, "%s %s: %v", library(), p.id(), err)
	}
	if *threads < 1 || *body < 0 || *maxConns < 1 {
		fatal(2, "--threads and --max-connections must be at least 1, --body at least 0")
	}
	runtime.GOMAXPROCS(*threads)
	var cores []int
	if *coresArg != "" {
		for _, c := range strings.Split(*coresArg, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				fatal(2, "--cores %q: not a list of core numbers", *coresArg)
			}
			cores = append(cores, n)
		}
		if err := pin(cores); err != nil {
			fatal(1, "%v", err)
		}
	}
	if *jsonPath != "" {
		if err := checkJSON(*jsonPath); err != nil {
			fatal(1, "--json %s: %v", *jsonPath, err)
		}
	}

	s := &server{p: p, body: pattern(*body), max: int64(*maxConns), idleTimeout: *idle, errors: map[string]uint64{}}
	tcp, err := net.Listen("tcp", *listen)
	if err != nil {
		fatal(1, "listening on %s: %v", *listen, err)
	}
	failedHandshakes := sync.Map{}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: *idle,
		IdleTimeout:       *idle,
		ErrorLog:          log.New(handshakeLog{s, &failedHandshakes}, "", 0),
		// HTTP/1.1 only: ALPN offers http/1.1 alone.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &conn{state: http.StateNew, since: time.Now()})
		},
	}
	// A connection closed after idling (or sending a header slowly) for
	// the idle timeout is counted idle-closed. net/http does not say why
	// it closed one: a close at least 90% of the timeout after the
	// connection's accept or its last response counts, unless its
	// handshake failed (counted by kind above).
	states := sync.Map{}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		now := time.Now()
		switch st {
		// Not StateActive: net/http sets it once a request's read ends,
		// failed (a header timeout) or not.
		case http.StateNew, http.StateIdle:
			states.Store(c, now)
		case http.StateClosed, http.StateHijacked:
			prev, _ := states.LoadAndDelete(c)
			_, failed := failedHandshakes.LoadAndDelete(c.RemoteAddr().String())
			if t, ok := prev.(time.Time); ok && !failed && now.Sub(t) >= *idle*9/10 {
				s.idleClosed.Add(1)
			}
		}
	}

	started := time.Now()
	cpuStart := cpuSeconds()
	samples := []uint64{rss()}
	var samplesMu sync.Mutex
	stopSampling := make(chan struct{})
	go func() {
		tick := time.NewTicker(rssInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				samplesMu.Lock()
				samples = append(samples, rss())
				samplesMu.Unlock()
			case <-stopSampling:
				return
			}
		}
	}()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	served := make(chan error, 1)
	if *echo {
		go func() {
			l := limited{tcp, s}
			for {
				c, err := l.Accept()
				if err != nil {
					served <- err
					return
				}
				go s.echo(c, tlsConfig, *handshakeTimeout)
			}
		}()
		fmt.Printf("serving %s echo, %s on %s\n", library(), p.id(), tcp.Addr())
	} else {
		go func() { served <- srv.Serve(tls.NewListener(limited{tcp, s}, tlsConfig)) }()
		fmt.Printf("serving %s HTTPS, %d B bodies, %s on %s\n", library(), *body, p.id(), tcp.Addr())
	}

	select {
	case <-signals:
	case err := <-served:
		fatal(1, "serving: %v", err)
	}
	srv.Close()
	tcp.Close()
	close(stopSampling)
	samplesMu.Lock()
	samples = append(samples, rss())
	samplesMu.Unlock()
	seconds := time.Since(started).Seconds()
	cpu := cpuSeconds() - cpuStart
	handshakes := s.full.Load() + s.resumed.Load()
	var perHandshake *float64
	if handshakes > 0 {
		v := cpu / float64(handshakes) * 1e6
		perHandshake = &v
	}
	peak := uint64(0)
	for _, k := range samples {
		peak = max(peak, k)
	}
	if cores == nil {
		cores = []int{}
	}
	s.mu.Lock()
	summary := map[string]any{
		"library":              library(),
		"parameters":           p.id(),
		"listen":               tcp.Addr().String(),
		"seconds":              seconds,
		"connections":          s.connections.Load(),
		"over_limit":           s.overLimit.Load(),
		"evicted":              0,
		"handshakes_full":      s.full.Load(),
		"handshakes_resumed":   s.resumed.Load(),
		"idle_closed":          s.idleClosed.Load(),
		"requests":             s.requests.Load(),
		"http2":                0,
		"bytes_received":       s.bytesRecv.Load(),
		"bytes_sent":           s.bytesSent.Load(),
		"cpu_seconds":          cpu,
		"cpu_us_per_handshake": perHandshake,
		"cores":                cores,
		"errors":               s.errors,
		"error_examples":       append([]string{}, s.examples...),
		// The tools compute the slope from the samples (RssTrace::of).
		"rss": map[string]any{
			"interval_s":                  rssInterval.Seconds(),
			"samples_kib":                 samples,
			"start_kib":                   samples[0],
			"peak_kib":                    peak,
			"end_kib":                     samples[len(samples)-1],
			"slope_last_half_kib_per_min": nil,
		},
	}
	s.mu.Unlock()
	fmt.Printf("%s: %d connections, %d full and %d resumed handshakes, %d requests in %.1f s; %.2f CPU s; errors %v\n",
		library(), s.connections.Load(), s.full.Load(), s.resumed.Load(), s.requests.Load(), seconds, cpu, s.errors)
	if *jsonPath != "" {
		text, err := json.MarshalIndent(summary, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonPath, append(text, '\n'), 0o644)
		}
		if err != nil {
			fatal(1, "writing --json %s: %v", *jsonPath, err)
		}
	}
}
