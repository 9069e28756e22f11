// https-serve for Java: SunJSSE (the JDK's own TLS, in Java) behind an
// SSLServerSocket with a thread per connection, the shape of Mozilla JSS's
// BenchmarkSSLSocket; the JSS server (../jss/JssServe.java) is this one with
// another Engine. It takes https-serve's command line and speaks its
// protocol with the tools (crates/sockets/src/child.rs): --list, --probe
// answering `supported` or `unsupported: <why>`, the parameter options, a
// first line `serving ... on ADDR`, and on SIGINT or SIGTERM a summary
// written as JSON to --json (tls_bench_results::sockets::ServerSummary).
// Every GET is answered `200 OK` with --body bytes of the harness's pattern
// (tls_bench_harness::workload::pattern); each connection's version, suite,
// resumption and client authentication are checked after its handshake
// (SunJSSE tells an application no group: the client checks it). With
// --echo it is instead an echo server (`serve`'s protocol, for `compare
// --sockets`): every byte read is written back, each connection checked
// after its handshake. docs/https.md, "Other runtimes", says what it counts and what it cannot.
//
// Compiled by the tools (tls_bench_sockets::runtimes) and run by the
// wrapper they write, which passes --certs-dir <the repository's certs/>.

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

public final class HttpsServe {
    static final String SERVER_NAME = "localhost";
    static final int MAX_EXAMPLES = 5;
    static final long RSS_INTERVAL_MS = 1000;

    static final List<String> KINDS = List.of("server-auth", "mTLS", "resumption");
    static final List<String> SUITES = List.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");
    static final List<String> GROUPS = List.of("x25519", "secp256r1", "secp384r1", "X25519MLKEM768");
    static final Map<String, String> CHAINS = Map.of(
            "RSA-2048", "rsa2048", "RSA-3072", "rsa3072", "RSA-4096", "rsa4096",
            "ECDSA-P256", "ecdsa-p256", "ECDSA-P384", "ecdsa-p384");

    static void fail(int code, String message) {
        System.err.println("error: " + message);
        System.exit(code);
    }

    static String fold(String what, String value, List<String> names) {
        for (String n : names) {
            if (n.equalsIgnoreCase(value)) {
                return n;
            }
        }
        fail(2, "--" + what + " \"" + value + "\": valid values are " + String.join(", ", names));
        return null;
    }

    /** One parameter set, as tls_bench_harness::params::Params. */
    static final class Params {
        String kind, suite, group, cert;
        boolean tls13;

        String protocol() {
            return tls13 ? "TLSv1.3" : "TLSv1.2";
        }

        String id() {
            return String.join(",", kind, protocol(), suite, group, cert);
        }
    }

    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;

        Unsupported(String why) {
            super(why);
        }
    }

    static byte[] pem(Path file, String label) throws IOException {
        String text = Files.readString(file);
        String begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
        int a = text.indexOf(begin), b = text.indexOf(end);
        if (a < 0 || b < 0) {
            throw new IOException(file + ": no " + label);
        }
        return Base64.getMimeDecoder().decode(text.substring(a + begin.length(), b));
    }

    /**
     * What a handshake gave: whether it resumed (null: the engine cannot
     * tell), what was wrong (null: nothing), and the stream the requests are
     * read from (null: the socket's own).
     */
    record Handshake(Boolean resumed, String wrong, InputStream in) {}

    /** The TLS implementation behind the server: SunJSSE below, JSS in ../jss/JssServe.java. */
    interface Engine {
        /** The library row's name, e.g. java-sunjsse-17.0.15 (`--list`). */
        String library();

        /** The name `--library` takes besides library() (java-sunjsse). */
        String shortName();

        /**
         * Sets up for p with the chains under certs (process-wide settings too).
         * Throws Unsupported (a named skip) or another exception (a failure).
         */
        void configure(Params p, Path certs) throws Exception;

        /** A server socket bound to addr (backlog 4096), set up as configure() said. */
        ServerSocket listen(InetSocketAddress addr) throws IOException;

        /**
         * The handshake of an accepted socket within timeoutMs, begun at
         * startedMillis, checked against p. Throws IOException when it fails.
         */
        Handshake handshake(Socket socket, Params p, long timeoutMs, long startedMillis) throws IOException;

        /** What the engine leaves behind, removed at the stop (nothing by default). */
        default void close() {}
    }

    /** SunJSSE: the JDK's own TLS. */
    static final class SunJsse implements Engine {
        SSLContext ctx;
        Params p;

        public String library() {
            return "java-sunjsse-" + System.getProperty("java.version");
        }

        public String shortName() {
            return "java-sunjsse";
        }

        public void configure(Params p, Path certs) throws Exception {
            this.p = p;
            // The one group, and tickets only for resumption, are process-wide
            // settings in SunJSSE, read when TLS is first set up.
            if (!p.group.equals("X25519MLKEM768")) {
                System.setProperty("jdk.tls.namedGroups", p.group);
            }
            System.setProperty("jdk.tls.server.enableSessionTicketExtension", String.valueOf(p.kind.equals("resumption")));
            ctx = context(p, certs);
        }

        public ServerSocket listen(InetSocketAddress addr) throws IOException {
            SSLServerSocket listener = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket();
            listener.setSSLParameters(parameters(ctx, p));
            listener.setReuseAddress(true);
            listener.bind(addr, 4096);
            return listener;
        }

        public Handshake handshake(Socket socket, Params p, long timeoutMs, long startedMillis) throws IOException {
            SSLSocket tls = (SSLSocket) socket;
            tls.setSoTimeout((int) timeoutMs);
            tls.startHandshake();
            boolean resumed = resumed(tls.getSession(), startedMillis);
            return new Handshake(resumed, check(tls.getSession(), resumed, p), null);
        }

        /** The server's SSLContext for p. Throws Unsupported (a named skip). */
        static SSLContext context(Params p, Path certs) throws Exception {
            if (p.group.equals("X25519MLKEM768")) {
                throw new Unsupported("SunJSSE " + System.getProperty("java.version") + " has no X25519MLKEM768");
            }
            if (!p.tls13 && p.suite.startsWith("TLS_ECDHE_ECDSA_") != p.cert.startsWith("ECDSA")) {
                throw new Unsupported(p.suite + " needs a certificate of its own key type, not " + p.cert);
            }
            Path dir = certs.resolve(CHAINS.get(p.cert));
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            Certificate[] chain;
            try (InputStream in = Files.newInputStream(dir.resolve("server-chain.pem"))) {
                chain = cf.generateCertificates(in).toArray(new Certificate[0]);
            }
            PrivateKey key = KeyFactory.getInstance(p.cert.startsWith("ECDSA") ? "EC" : "RSA")
                    .generatePrivate(new PKCS8EncodedKeySpec(pem(dir.resolve("server-key.pem"), "PRIVATE KEY")));
            char[] none = new char[0];
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, none);
            keys.setKeyEntry("server", key, none, chain);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, none);
            TrustManagerFactory tmf = null;
            if (p.kind.equals("mTLS")) {
                KeyStore trust = KeyStore.getInstance("PKCS12");
                trust.load(null, none);
                try (InputStream in = Files.newInputStream(dir.resolve("ca-cert.pem"))) {
                    trust.setCertificateEntry("ca", cf.generateCertificate(in));
                }
                tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
            List<String> supported = Arrays.asList(ctx.getServerSocketFactory().getSupportedCipherSuites());
            if (!supported.contains(p.suite)) {
                throw new Unsupported("SunJSSE " + System.getProperty("java.version") + " has no " + p.suite);
            }
            return ctx;
        }

        static SSLParameters parameters(SSLContext ctx, Params p) {
            SSLParameters sp = ctx.getDefaultSSLParameters();
            sp.setProtocols(new String[] {p.protocol()});
            sp.setCipherSuites(new String[] {p.suite});
            sp.setApplicationProtocols(new String[] {"http/1.1"});
            sp.setSNIMatchers(List.of(SNIHostName.createSNIMatcher(SERVER_NAME)));
            sp.setNeedClientAuth(p.kind.equals("mTLS"));
            return sp;
        }

        /**
         * Whether the session of a handshake begun at startedMillis was resumed.
         * SunJSSE has no public flag for it; a resumed session keeps the creation
         * time of the session it resumes (TLS 1.2's cached session itself, TLS
         * 1.3's from its ticket; checked on JDK 17), so one created before its
         * handshake began was resumed.
         */
        static boolean resumed(SSLSession s, long startedMillis) {
            return s.getCreationTime() < startedMillis;
        }

        /**
         * What the connection negotiated, against p (no group: SunJSSE does not
         * say; the client checks it); a resumption run's first, full handshake is
         * checked as server-auth (tls_bench_sockets::check_server).
         */
        static String check(SSLSession s, boolean resumed, Params p) {
            List<String> wrong = new ArrayList<>();
            String wanted = p.kind.equals("resumption") && !resumed ? "server-auth" : p.kind;
            if (resumed != wanted.equals("resumption")) {
                wrong.add("resumed " + resumed + " (wanted " + wanted.equals("resumption") + ")");
            }
            if (!s.getProtocol().equals(p.protocol())) {
                wrong.add("protocol " + s.getProtocol() + " (wanted " + p.protocol() + ")");
            }
            if (!s.getCipherSuite().equals(p.suite)) {
                wrong.add("suite " + s.getCipherSuite() + " (wanted " + p.suite + ")");
            }
            boolean auth;
            try {
                auth = s.getPeerCertificates().length > 0;
            } catch (SSLPeerUnverifiedException e) {
                auth = false;
            }
            if (auth != wanted.equals("mTLS")) {
                wrong.add("client authenticated " + auth + " (wanted " + wanted.equals("mTLS") + ")");
            }
            return wrong.isEmpty() ? null : "negotiated " + String.join(", ", wrong);
        }

    }

    static byte[] pattern(int n) {
        long x = 0x9E3779B97F4A7C15L;
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            out[i] = (byte) x;
        }
        return out;
    }

    static long duration(String what, String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+)(ms|s|m)$").matcher(text);
        if (!m.matches()) {
            fail(2, "--" + what + " \"" + text + "\": a duration such as 500ms, 10s or 1m");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> n;
            case "s" -> n * 1000;
            default -> n * 60000;
        };
    }

    static int integer(String what, String text, int least) {
        try {
            int n = Integer.parseInt(text.trim());
            if (n >= least) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        fail(2, "--" + what + " \"" + text + "\": an integer of at least " + least);
        return 0;
    }

    static long rssKib() {
        try {
            String[] f = Files.readString(Path.of("/proc/self/statm")).trim().split("\\s+");
            return Long.parseLong(f[1]) * 4;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    static double cpuSeconds() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() / 1e9;
    }

    // The counters.
    final Engine engine;
    final Params p;
    final byte[] body;
    final int maxConnections;
    final long handshakeTimeout, idleTimeout;
    final AtomicLong connections = new AtomicLong(), active = new AtomicLong(), overLimit = new AtomicLong(),
            handshakes = new AtomicLong(), handshakesResumed = new AtomicLong(),
            handshakesUnclassified = new AtomicLong(), idleClosed = new AtomicLong(), requests = new AtomicLong(),
            bytesReceived = new AtomicLong(), bytesSent = new AtomicLong();
    /** Echo every byte back instead of answering HTTP (--echo). */
    boolean echo;
    final Map<String, Long> errors = new TreeMap<>();
    final List<String> examples = new ArrayList<>();

    HttpsServe(Engine engine, Params p, byte[] body, int maxConnections, long handshakeTimeout, long idleTimeout) {
        this.engine = engine;
        this.p = p;
        this.body = body;
        this.maxConnections = maxConnections;
        this.handshakeTimeout = handshakeTimeout;
        this.idleTimeout = idleTimeout;
    }

    synchronized void failed(String kind, String message) {
        errors.merge(kind, 1L, Long::sum);
        if (examples.size() < MAX_EXAMPLES) {
            examples.add(kind + ": " + message);
        }
    }

    static String kindOf(Exception e) {
        if (e instanceof SocketTimeoutException) {
            return "timeout";
        }
        String m = String.valueOf(e.getMessage());
        if (m.contains("Connection reset") || m.contains("Broken pipe")) {
            return "reset";
        }
        if (e instanceof EOFException || m.contains("Remote host terminated")) {
            return "closed";
        }
        return "handshake";
    }

    /**
     * Reads a request head (to its blank line) within idleMs of the call, as
     * the other servers bound a whole header (a slowloris is closed at the
     * timeout); null at a clean end before one. Throws SocketTimeoutException
     * past the deadline.
     */
    static String head(InputStream in, Socket socket, long idleMs) throws IOException {
        long deadline = System.nanoTime() + idleMs * 1_000_000;
        StringBuilder sb = new StringBuilder();
        int c;
        while (true) {
            if (in.available() == 0) {
                long remaining = (deadline - System.nanoTime()) / 1_000_000;
                if (remaining <= 0) {
                    throw new SocketTimeoutException("no whole request header in " + idleMs + " ms");
                }
                socket.setSoTimeout((int) remaining);
            }
            if ((c = in.read()) < 0) {
                break;
            }
            sb.append((char) c);
            int n = sb.length();
            if (n >= 4 && sb.charAt(n - 4) == '\r' && sb.charAt(n - 3) == '\n' && sb.charAt(n - 2) == '\r'
                    && sb.charAt(n - 1) == '\n') {
                return sb.toString();
            }
            if (n > 64 * 1024) {
                throw new IOException("a request head over 64 KiB");
            }
        }
        if (sb.length() > 0) {
            throw new EOFException("the client closed inside a request head");
        }
        return null;
    }

    void serve(Socket socket) {
        try (socket) {
            long startedMillis = System.currentTimeMillis();
            Handshake h0;
            try {
                h0 = engine.handshake(socket, p, handshakeTimeout, startedMillis);
            } catch (IOException e) {
                failed(kindOf(e), String.valueOf(e.getMessage()));
                return;
            }
            if (h0.wrong() != null) {
                failed("negotiated", h0.wrong());
                return;
            }
            (h0.resumed() == null ? handshakesUnclassified : h0.resumed() ? handshakesResumed : handshakes)
                    .incrementAndGet();
            if (echo) {
                echo(socket, h0.in() != null ? h0.in() : socket.getInputStream(), socket.getOutputStream());
                return;
            }
            InputStream in = new java.io.BufferedInputStream(h0.in() != null ? h0.in() : socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            byte[] ok = ("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            while (true) {
                String h;
                try {
                    h = head(in, socket, idleTimeout);
                } catch (SocketTimeoutException e) {
                    idleClosed.incrementAndGet();
                    return;
                }
                if (h == null) {
                    return;
                }
                String lower = h.toLowerCase(Locale.ROOT);
                boolean close = lower.contains("\r\nconnection: close\r\n");
                if (!h.startsWith("GET ")) {
                    out.write("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    return;
                }
                byte[] response = new byte[ok.length + body.length];
                System.arraycopy(ok, 0, response, 0, ok.length);
                System.arraycopy(body, 0, response, ok.length, body.length);
                out.write(response);
                out.flush();
                requests.incrementAndGet();
                bytesSent.addAndGet(body.length);
                if (close) {
                    return;
                }
            }
        } catch (IOException e) {
            failed(kindOf(e), String.valueOf(e.getMessage()));
        } finally {
            active.decrementAndGet();
        }
    }

    /**
     * Writes back every byte read until the client's close_notify (the
     * socket's close answers it), or an idle timeout (counted idle-closed).
     * Throws IOException when a read or write fails.
     */
    void echo(Socket socket, InputStream in, OutputStream out) throws IOException {
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, idleTimeout));
        byte[] buf = new byte[64 * 1024];
        long received = 0, sent = 0;
        try {
            while (true) {
                int n;
                try {
                    n = in.read(buf);
                } catch (SocketTimeoutException e) {
                    idleClosed.incrementAndGet();
                    return;
                }
                if (n < 0) {
                    return;
                }
                received += n;
                out.write(buf, 0, n);
                out.flush();
                sent += n;
            }
        } finally {
            bytesReceived.addAndGet(received);
            bytesSent.addAndGet(sent);
        }
    }

    static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String s) {
            StringBuilder sb = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            return sb.append('"').toString();
        }
        if (v instanceof Map<?, ?> m) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                parts.add(json(String.valueOf(e.getKey())) + ": " + json(e.getValue()));
            }
            return "{" + String.join(", ", parts) + "}";
        }
        if (v instanceof List<?> l) {
            List<String> parts = new ArrayList<>();
            for (Object o : l) {
                parts.add(json(o));
            }
            return "[" + String.join(", ", parts) + "]";
        }
        return String.valueOf(v);
    }

    public static void main(String[] argv) throws Exception {
        run(argv, new SunJsse());
    }

    /** The server: argv as https-serve's, TLS from engine. */
    public static void run(String[] argv, Engine engine) throws Exception {
        final String LIBRARY = engine.library();
        Map<String, String> args = new HashMap<>();
        List<String> valued = List.of("library", "kind", "suite", "group", "cert", "listen", "threads", "cores", "body",
                "max-connections", "handshake-timeout", "idle-timeout", "json", "certs-dir");
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) {
                fail(2, "unexpected argument \"" + a + "\"");
            }
            String name = a.substring(2), value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("list") || name.equals("probe") || name.equals("echo")) {
                args.put(name, "");
            } else if (valued.contains(name)) {
                if (value == null) {
                    if (i + 1 >= argv.length) {
                        fail(2, "--" + name + " needs a value");
                    }
                    value = argv[++i];
                }
                args.put(name, value);
            } else {
                fail(2, "unknown option --" + name);
            }
        }
        if (args.containsKey("list")) {
            System.out.println(LIBRARY);
            return;
        }
        String library = args.getOrDefault("library", "");
        if (!library.equals(engine.shortName()) && !library.equals(LIBRARY)) {
            fail(2, "--library \"" + library + "\": this server has only " + LIBRARY + " (" + engine.shortName() + ")");
        }
        Params p = new Params();
        p.kind = fold("kind", args.getOrDefault("kind", "server-auth"), KINDS);
        p.suite = fold("suite", args.getOrDefault("suite", "TLS_AES_128_GCM_SHA256"), SUITES);
        p.group = fold("group", args.getOrDefault("group", "x25519"), GROUPS);
        p.cert = fold("cert", args.getOrDefault("cert", "ECDSA-P256"), new ArrayList<>(CHAINS.keySet()));
        p.tls13 = !p.suite.startsWith("TLS_ECDHE_");
        String certsDir = System.getenv("TLS_BENCH_CERTS_DIR");
        if (certsDir == null || certsDir.isEmpty()) {
            certsDir = args.get("certs-dir");
        }
        if (certsDir == null) {
            fail(2, "--certs-dir: the certificates' directory is needed");
        }
        try {
            engine.configure(p, Path.of(certsDir));
        } catch (Unsupported u) {
            if (args.containsKey("probe")) {
                System.out.println("unsupported: " + u.getMessage());
                return;
            }
            fail(1, LIBRARY + " " + p.id() + ": " + u.getMessage());
            return;
        } catch (Exception e) {
            fail(1, LIBRARY + " " + p.id() + ": " + e);
            return;
        }
        if (args.containsKey("probe")) {
            System.out.println("supported");
            return;
        }
        int bodyLen = integer("body", args.getOrDefault("body", "1024"), 0);
        int maxConnections = integer("max-connections", args.getOrDefault("max-connections", "10000"), 1);
        long handshakeTimeout = duration("handshake-timeout", args.getOrDefault("handshake-timeout", "10s"));
        long idleTimeout = duration("idle-timeout", args.getOrDefault("idle-timeout", "60s"));
        if (args.containsKey("threads")) {
            integer("threads", args.get("threads"), 1);
        }
        List<Integer> cores = new ArrayList<>();
        if (args.containsKey("cores")) {
            for (String c : args.get("cores").split(",")) {
                cores.add(integer("cores", c, 0));
            }
            Process taskset = new ProcessBuilder("taskset", "-a", "-p", "-c", args.get("cores"),
                    String.valueOf(ProcessHandle.current().pid())).redirectErrorStream(true).start();
            taskset.getInputStream().readAllBytes();
            if (taskset.waitFor() != 0) {
                fail(1, "pinning to cores " + args.get("cores") + " (taskset) failed");
            }
        }
        String jsonPath = args.get("json");
        if (jsonPath != null) {
            Path json = Path.of(jsonPath).toAbsolutePath();
            try {
                Files.createDirectories(json.getParent());
                if (Files.exists(json)) {
                    Files.newOutputStream(json, java.nio.file.StandardOpenOption.APPEND).close();
                } else {
                    Files.newOutputStream(json, java.nio.file.StandardOpenOption.CREATE_NEW).close();
                    Files.delete(json);
                }
            } catch (IOException e) {
                fail(1, "--json " + jsonPath + ": " + e);
            }
        }
        String listen = args.getOrDefault("listen", "127.0.0.1:4433");
        int colon = listen.lastIndexOf(':');
        if (colon < 0) {
            fail(2, "--listen \"" + listen + "\": an address and a port");
        }
        HttpsServe server = new HttpsServe(engine, p, pattern(bodyLen), maxConnections, handshakeTimeout, idleTimeout);
        server.echo = args.containsKey("echo");
        ServerSocket opened = null;
        try {
            opened = engine.listen(new InetSocketAddress(
                    InetAddress.getByName(listen.substring(0, colon).replaceAll("^\\[|\\]$", "")),
                    Integer.parseInt(listen.substring(colon + 1))));
        } catch (IOException | RuntimeException e) {
            fail(1, "listening on " + listen + ": " + e.getMessage());
        }
        final ServerSocket listener = opened;
        String bound = listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort();

        long started = System.nanoTime();
        double cpuStart = cpuSeconds();
        List<Long> samples = new ArrayList<>();
        samples.add(rssKib());
        Thread sampler = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(RSS_INTERVAL_MS);
                    synchronized (samples) {
                        samples.add(rssKib());
                    }
                }
            } catch (InterruptedException e) {
                // stopped
            }
        });
        sampler.setDaemon(true);
        sampler.start();

        Runnable stop = () -> {
            sampler.interrupt();
            try {
                listener.close();
            } catch (IOException e) {
                // closing
            }
            List<Long> rss;
            synchronized (samples) {
                samples.add(rssKib());
                rss = new ArrayList<>(samples);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            double cpu = cpuSeconds() - cpuStart;
            long full = server.handshakes.get(), resumedCount = server.handshakesResumed.get(),
                    unclassified = server.handshakesUnclassified.get(), hs = full + resumedCount + unclassified;
            Map<String, Object> trace = new LinkedHashMap<>();
            trace.put("interval_s", RSS_INTERVAL_MS / 1000.0);
            trace.put("samples_kib", rss);
            trace.put("start_kib", rss.get(0));
            trace.put("peak_kib", rss.stream().mapToLong(Long::longValue).max().orElse(0));
            trace.put("end_kib", rss.get(rss.size() - 1));
            trace.put("slope_last_half_kib_per_min", null);
            Map<String, Object> s = new LinkedHashMap<>();
            synchronized (server) {
                s.put("library", LIBRARY);
                s.put("parameters", p.id());
                s.put("listen", bound);
                s.put("seconds", seconds);
                s.put("connections", server.connections.get());
                s.put("over_limit", server.overLimit.get());
                s.put("evicted", 0);
                s.put("handshakes_full", full);
                s.put("handshakes_resumed", resumedCount);
                s.put("handshakes_unclassified", unclassified);
                s.put("idle_closed", server.idleClosed.get());
                s.put("requests", server.requests.get());
                s.put("http2", 0);
                s.put("bytes_received", server.bytesReceived.get());
                s.put("bytes_sent", server.bytesSent.get());
                s.put("cpu_seconds", cpu);
                s.put("cpu_us_per_handshake", hs > 0 ? cpu / hs * 1e6 : null);
                s.put("cores", cores);
                s.put("errors", new TreeMap<>(server.errors));
                s.put("error_examples", new ArrayList<>(server.examples));
                s.put("rss", trace);
            }
            System.out.println(LIBRARY + ": " + server.connections.get() + " connections, " + full + " full, " + resumedCount + " resumed and " + unclassified + " unclassified handshakes, "
                    + server.requests.get() + " requests in " + String.format("%.1f", seconds) + " s; "
                    + String.format("%.2f", cpu) + " CPU s; errors " + server.errors);
            System.out.flush();
            if (jsonPath != null) {
                try {
                    Files.writeString(Path.of(jsonPath), json(s) + "\n");
                } catch (IOException e) {
                    System.err.println("error: writing --json " + jsonPath + ": " + e);
                    engine.close();
                    Runtime.getRuntime().halt(1);
                }
            }
            engine.close();
            Runtime.getRuntime().halt(0);
        };
        for (String sig : List.of("INT", "TERM")) {
            sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> stop.run());
        }
        System.out.println("serving " + LIBRARY + (server.echo ? " echo, " : " HTTPS, " + bodyLen + " B bodies, ")
                + p.id() + " on " + bound);
        System.out.flush();
        while (true) {
            Socket accepted;
            try {
                accepted = listener.accept();
            } catch (IOException e) {
                // Closed at the stop (SocketException; JSS's an InterruptedIOException).
                if (listener.isClosed()) {
                    Thread.sleep(Long.MAX_VALUE);
                }
                server.failed("io", String.valueOf(e.getMessage()));
                continue;
            }
            server.connections.incrementAndGet();
            if (server.active.incrementAndGet() > maxConnections) {
                server.active.decrementAndGet();
                server.overLimit.incrementAndGet();
                accepted.close();
                continue;
            }
            // A thread per connection, as the seed's servers.
            Thread t = new Thread(() -> server.serve(accepted));
            t.setDaemon(true);
            t.start();
        }
    }
}
