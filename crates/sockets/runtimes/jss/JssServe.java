// https-serve for Mozilla JSS: NSS's TLS through JSS's own SSLServerSocket
// and SSLSocket (org.mozilla.jss.ssl, the native NSS sockets: the seed's
// "JSS.SSLSocket", its BenchmarkSSLSocket's legacy row), a thread per
// connection. Everything but the TLS is the Java server's
// (../java/HttpsServe.java, compiled beside this file): the command line,
// the protocol with the tools, HTTP/1.1, the counts and the summary.
//
// NSS reads its keys from a database: at its start the server makes one in
// a fresh folder under --nss-work (the wrapper passes its own folder, under
// target/runtimes/jss/), holding the row's chain and key and, for mTLS, the
// CA the client certificates are checked against; NSS's certutil and
// pk12util fill it (Debian's libnss3-tools). The folder is removed at the
// stop.
//
// What JSS's sockets let a server set, it sets: the version alone
// (minimum = maximum), the suite alone, session tickets and the session
// cache only for resumption, client authentication for mTLS. The group
// is NSS's policy in the database (pkcs11.txt: every other curve disallowed
// for SSL key exchange, as Fedora's crypto-policies set NSS's), but for the
// curve of an ECDSA chain's key, which the policy would keep the server from
// using: a client offering both gets NSS's choice, and its check fails.
// What neither lets it set, it does not: SNI and ALPN. What they let it read back, it checks: a client certificate for
// mTLS (and none otherwise); not the version, suite or resumption, which
// JSS's SSLSocket does not report (its SSLSecurityStatus names the bulk
// cipher, checked against the suite's). The client checks all five.
// docs/https.md, "Other runtimes".

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.mozilla.jss.CryptoManager;
import org.mozilla.jss.InitializationValues;
import org.mozilla.jss.ssl.SSLCipher;
import org.mozilla.jss.ssl.SSLProtocolVariant;
import org.mozilla.jss.ssl.SSLSecurityStatus;
import org.mozilla.jss.ssl.SSLServerSocket;
import org.mozilla.jss.ssl.SSLSocket;
import org.mozilla.jss.ssl.SSLVersionRange;

public final class JssServe {
    /** The nickname of the server's chain in the database. */
    static final String NICKNAME = "server";
    /** The curves NSS's policy names (lib/pk11wrap/pk11pars.c) that a client may offer. */
    static final List<String> NSS_CURVES = List.of("curve25519", "secp256r1", "secp384r1", "secp521r1");

    /** NSS's policy name of an IANA group name. */
    static String nssCurve(String group) {
        return group.equals("x25519") ? "curve25519" : group;
    }

    /** The transient PKCS #12 file's password (pk12util needs one). */
    static final String P12_PASSWORD = "tls-bench";

    public static void main(String[] argv) throws Exception {
        List<String> rest = new ArrayList<>();
        String work = null;
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].equals("--nss-work") && i + 1 < argv.length) {
                work = argv[++i];
            } else {
                rest.add(argv[i]);
            }
        }
        if (work == null) {
            HttpsServe.fail(2, "--nss-work: the folder for NSS's database is needed (the wrapper passes it)");
        }
        HttpsServe.run(rest.toArray(new String[0]), new Jss(Path.of(work)));
    }

    /** JSS's native NSS sockets as the server's TLS. */
    static final class Jss implements HttpsServe.Engine {
        final Path work;
        Path db;
        HttpsServe.Params p;

        Jss(Path work) {
            this.work = work;
        }

        public String library() {
            return "java-jss-" + CryptoManager.getJSSVersion().replaceFirst("^JSS_", "").replace('_', '.');
        }

        public String shortName() {
            return "java-jss";
        }

        public void configure(HttpsServe.Params p, Path certs) throws Exception {
            this.p = p;
            if (p.group.equals("X25519MLKEM768")) {
                throw new HttpsServe.Unsupported(library() + " (NSS through JSS's SSLSocket) has no X25519MLKEM768");
            }
            if (!p.tls13 && p.suite.startsWith("TLS_ECDHE_ECDSA_") != p.cert.startsWith("ECDSA")) {
                throw new HttpsServe.Unsupported(p.suite + " needs a certificate of its own key type, not " + p.cert);
            }
            SSLCipher suite;
            try {
                suite = SSLCipher.valueOf(p.suite);
            } catch (IllegalArgumentException e) {
                throw new HttpsServe.Unsupported(library() + " has no " + p.suite);
            }
            db = database(certs.resolve(HttpsServe.CHAINS.get(p.cert)), p.kind.equals("mTLS"));
            Runtime.getRuntime().addShutdownHook(new Thread(this::close));
            InitializationValues init = new InitializationValues("sql:" + db);
            init.installJSSProvider = false;
            init.noCertDB = false;
            CryptoManager.initialize(init);
            int version = p.tls13 ? SSLVersionRange.tls1_3 : SSLVersionRange.tls1_2;
            SSLSocket.setSSLVersionRangeDefault(SSLProtocolVariant.STREAM, new SSLVersionRange(version, version));
            for (int id : SSLSocket.getImplementedCipherSuites()) {
                SSLSocket.setCipherPreferenceDefault(id, id == suite.getID());
            }
            // An NSS server needs its session cache set up whatever it serves
            // (without it a TLS 1.2 handshake crashes in libssl3); each
            // listener uses it only for resumption (listen).
            SSLSocket.enableSessionTicketsDefault(p.kind.equals("resumption"));
            SSLServerSocket.configServerSessionIDCache(10000, 0, 0, null);
        }

        /**
         * A new NSS database under work holding the chain in dir (its
         * server-chain.pem and server-key.pem) as NICKNAME and, with mtls,
         * its ca-cert.pem trusted to issue client certificates. Throws when
         * certutil or pk12util fails.
         */
        Path database(Path dir, boolean mtls) throws Exception {
            Files.createDirectories(work);
            Path made = Files.createTempDirectory(work, "nssdb-");
            Path p12 = made.resolve("server.p12");
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            Certificate[] chain;
            try (var in = Files.newInputStream(dir.resolve("server-chain.pem"))) {
                chain = cf.generateCertificates(in).toArray(new Certificate[0]);
            }
            String algorithm = p.cert.startsWith("ECDSA") ? "EC" : "RSA";
            var key = KeyFactory.getInstance(algorithm).generatePrivate(
                    new PKCS8EncodedKeySpec(HttpsServe.pem(dir.resolve("server-key.pem"), "PRIVATE KEY")));
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry(NICKNAME, key, P12_PASSWORD.toCharArray(), chain);
            try (OutputStream out = Files.newOutputStream(p12)) {
                store.store(out, P12_PASSWORD.toCharArray());
            }
            String sql = "sql:" + made;
            tool(List.of("certutil", "-N", "-d", sql, "--empty-password"));
            tool(List.of("pk12util", "-i", p12.toString(), "-d", sql, "-W", P12_PASSWORD, "-K", ""));
            Files.delete(p12);
            // The row's group alone, but the curve of the chain's own key,
            // which NSS's policy would then refuse to serve: NSS's policy
            // module, read with the database.
            String keyCurve = switch (p.cert) {
                case "ECDSA-P256" -> "secp256r1";
                case "ECDSA-P384" -> "secp384r1";
                default -> "";
            };
            List<String> others = new ArrayList<>();
            for (String curve : NSS_CURVES) {
                if (!curve.equals(nssCurve(p.group)) && !curve.equals(keyCurve)) {
                    others.add(curve + "/ssl-key-exchange");
                }
            }
            Files.writeString(made.resolve("pkcs11.txt"), "\nlibrary=\nname=Policy\nNSS=flags=policyOnly,moduleDB\n"
                    + "config=\"disallow=" + String.join(":", others) + "\"\n",
                    java.nio.file.StandardOpenOption.APPEND);
            if (mtls) {
                tool(List.of("certutil", "-A", "-d", sql, "-n", "client-ca", "-t", "CT,,",
                        "-i", dir.resolve("ca-cert.pem").toString()));
            }
            return made;
        }

        /** Runs an NSS tool; throws with its output when it fails. */
        static void tool(List<String> command) throws Exception {
            Process proc = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(proc.getInputStream().readAllBytes());
            if (proc.waitFor() != 0) {
                throw new IOException(String.join(" ", command) + " failed (NSS's tools: Debian's libnss3-tools): "
                        + out.trim());
            }
        }

        /** Removes the database. */
        public void close() {
            if (db == null) {
                return;
            }
            try (Stream<Path> files = Files.walk(db)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                // already gone
            }
        }

        public ServerSocket listen(InetSocketAddress addr) throws IOException {
            SSLServerSocket listener = new SSLServerSocket(addr.getPort(), 4096, addr.getAddress(), null, true);
            listener.setServerCertNickname(NICKNAME);
            listener.setUseClientMode(false);
            listener.useCache(p.kind.equals("resumption"));
            if (p.kind.equals("mTLS")) {
                listener.requireClientAuth(SSLSocket.SSL_REQUIRE_ALWAYS);
            }
            return listener;
        }

        public HttpsServe.Handshake handshake(Socket socket, HttpsServe.Params p, long timeoutMs, long startedMillis)
                throws IOException {
            SSLSocket tls = (SSLSocket) socket;
            // JSS's forceHandshake waits for a silent client whatever the
            // socket's timeout (and closing the socket from another thread
            // crashes NSS); a read waits at most the timeout, running the
            // handshake first. So the handshake is the first request byte's
            // read, the byte given back to the requests' stream: the
            // handshake and that byte both within the handshake timeout.
            tls.setSoTimeout((int) timeoutMs);
            java.io.InputStream raw = tls.getInputStream();
            java.io.InputStream in = new AfterFirstByte(raw.read(), raw);
            SSLSecurityStatus status = tls.getStatus();
            List<String> wrong = new ArrayList<>();
            String bulk = bulkCipher(p.suite);
            if (!alphanumeric(status.getCipher()).equals(alphanumeric(bulk))) {
                wrong.add("cipher " + status.getCipher() + " (wanted " + bulk + ")");
            }
            boolean auth = status.getPeerCertificate() != null, mtls = p.kind.equals("mTLS");
            if (auth != mtls) {
                wrong.add("client authenticated " + auth + " (wanted " + mtls + ")");
            }
            return new HttpsServe.Handshake(null, wrong.isEmpty() ? null : "negotiated " + String.join(", ", wrong), in);
        }

        /**
         * A stream whose first byte was read already: that byte, with what
         * the socket holds beside it, then the socket's stream. Never waits
         * for more than one byte (a PushbackInputStream would: a 1-byte
         * message then waits for the next).
         */
        static final class AfterFirstByte extends java.io.InputStream {
            private int first;
            private final java.io.InputStream rest;

            AfterFirstByte(int first, java.io.InputStream rest) {
                this.first = first;
                this.rest = rest;
            }

            @Override
            public int read() throws IOException {
                if (first < 0) {
                    return rest.read();
                }
                int b = first;
                first = -1;
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                if (first < 0) {
                    return rest.read(b, off, len);
                }
                b[off] = (byte) first;
                first = -1;
                int more = Math.min(len - 1, rest.available());
                int n = more > 0 ? rest.read(b, off + 1, more) : 0;
                return 1 + Math.max(n, 0);
            }

            @Override
            public int available() throws IOException {
                return (first >= 0 ? 1 : 0) + rest.available();
            }
        }

        /** The bulk cipher of an IANA suite name, as NSS's SSL_SecurityStatus names it (but case and punctuation). */
        static String bulkCipher(String suite) {
            if (suite.contains("CHACHA20_POLY1305")) {
                return "ChaCha20-Poly1305";
            }
            return suite.contains("AES_256_GCM") ? "AES-256-GCM" : "AES-128-GCM";
        }

        /** text's letters and digits, lower case. */
        static String alphanumeric(String text) {
            return text.replaceAll("[^A-Za-z0-9]", "").toLowerCase(java.util.Locale.ROOT);
        }
    }
}
