// https-serve for Node.js: its `tls` and `https` modules (OpenSSL under
// libuv) as one of tls-bench's HTTPS servers. It takes https-serve's
// command line and speaks its protocol with the tools
// (crates/sockets/src/child.rs): --list, --probe answering `supported` or
// `unsupported: <why>`, the parameter options, a first line
// `serving ... on ADDR`, and on SIGINT or SIGTERM a summary written as JSON
// to --json (tls_bench_results::sockets::ServerSummary). Every GET is
// answered `200 OK` with --body bytes of the harness's pattern
// (tls_bench_harness::workload::pattern); each connection's version, suite,
// resumption and client authentication are checked after its handshake
// (Node cannot say a server's group: the client checks it). With --echo it
// is instead an echo server (`serve`'s protocol, for `compare --sockets`,
// on the `tls` module): every byte read is written back, each connection
// checked after its handshake. docs/https.md, "Other runtimes", says what
// it counts and what it cannot.
//
// Run by the wrapper the tools write (tls_bench_sockets::runtimes), which
// passes --certs-dir <the repository's certs/>.
'use strict';

const fs = require('fs');
const path = require('path');
const https = require('https');
const tls = require('tls');
const { execFileSync } = require('child_process');
const { constants } = require('crypto');

const SERVER_NAME = 'localhost';
const RSS_INTERVAL_MS = 1000;
const MAX_EXAMPLES = 5;

const LIBRARY = `node-tls-${process.versions.node}+openssl-${process.versions.openssl}`;

function fail(code, message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

// --name value and --name=value; flags without a value.
function parseArgs(argv) {
  const flags = new Set(['list', 'probe', 'echo']);
  const valued = new Set(['library', 'kind', 'suite', 'group', 'cert', 'listen', 'threads', 'cores', 'body',
    'max-connections', 'handshake-timeout', 'idle-timeout', 'json', 'certs-dir']);
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m) fail(2, `unexpected argument ${JSON.stringify(argv[i])}`);
    const [, name, inline] = m;
    if (flags.has(name)) {
      args[name] = true;
    } else if (valued.has(name)) {
      const value = inline !== undefined ? inline : argv[++i];
      if (value === undefined) fail(2, `--${name} needs a value`);
      args[name] = value;
    } else {
      fail(2, `unknown option --${name}`);
    }
  }
  return args;
}

function fold(what, value, names) {
  const found = names.find((n) => n.toLowerCase() === String(value).toLowerCase());
  if (found === undefined) fail(2, `--${what} ${JSON.stringify(value)}: valid values are ${names.join(', ')}`);
  return found;
}

// IANA name -> the name OpenSSL (so Node) takes in `ciphers`.
const SUITES = {
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
};
// tls-bench's group name -> OpenSSL's (`ecdhCurve`).
const GROUPS = { x25519: 'X25519', secp256r1: 'P-256', secp384r1: 'P-384', X25519MLKEM768: 'X25519MLKEM768' };
const CHAINS = {
  'RSA-2048': 'rsa2048', 'RSA-3072': 'rsa3072', 'RSA-4096': 'rsa4096', 'ECDSA-P256': 'ecdsa-p256', 'ECDSA-P384': 'ecdsa-p384',
};

function parseParams(args) {
  const p = {
    kind: fold('kind', args.kind || 'server-auth', ['server-auth', 'mTLS', 'resumption']),
    suite: fold('suite', args.suite || 'TLS_AES_128_GCM_SHA256', Object.keys(SUITES)),
    group: fold('group', args.group || 'x25519', Object.keys(GROUPS)),
    cert: fold('cert', args.cert || 'ECDSA-P256', Object.keys(CHAINS)),
  };
  p.tls13 = !p.suite.startsWith('TLS_ECDHE_');
  p.protocol = p.tls13 ? 'TLSv1.3' : 'TLSv1.2';
  p.id = [p.kind, p.protocol, p.suite, p.group, p.cert].join(',');
  return p;
}

class Unsupported extends Error {}

// The server's TLS options for p. Throws Unsupported (a named skip), or
// an error when the certificates cannot be read.
function tlsOptions(p, certsDir) {
  const [major, minor] = process.versions.openssl.split('.').map(Number);
  if (p.group === 'X25519MLKEM768' && (major < 3 || (major === 3 && minor < 5))) {
    throw new Unsupported(`Node's OpenSSL ${process.versions.openssl} has no X25519MLKEM768 (OpenSSL 3.5 added it)`);
  }
  if (!p.tls13 && p.group === 'X25519MLKEM768') throw new Unsupported('X25519MLKEM768 is a TLS 1.3 group');
  if (p.tls13 && p.kind === 'resumption') {
    // Checked with `openssl s_client -sess_in`: two tickets after a full
    // handshake, none after a resumed one; each resumption of a run needs
    // a ticket from the connection before.
    throw new Unsupported('Node.js\'s server issues no session ticket on a resumed TLS 1.3 connection, '
      + 'and each resumption needs one from the connection before');
  }
  if (!p.tls13 && p.suite.startsWith('TLS_ECDHE_ECDSA_') !== p.cert.startsWith('ECDSA')) {
    throw new Unsupported(`${p.suite} needs a certificate of its own key type, not ${p.cert}`);
  }
  const dir = path.join(certsDir, CHAINS[p.cert]);
  const read = (file) => fs.readFileSync(path.join(dir, file));
  const options = {
    cert: read('server-chain.pem'),
    key: read('server-key.pem'),
    minVersion: p.protocol,
    maxVersion: p.protocol,
    // Node gives TLS 1.3's names (TLS_*) to SSL_CTX_set_ciphersuites and
    // the others to SSL_CTX_set_cipher_list.
    ciphers: SUITES[p.suite],
    ecdhCurve: GROUPS[p.group],
    ALPNProtocols: ['http/1.1'],
    SNICallback: (name, cb) => (name && name !== SERVER_NAME
      ? cb(new Error(`the client asked for host ${JSON.stringify(name)}, not ${SERVER_NAME}`))
      : cb(null, null)),
  };
  // No TLS 1.2 tickets unless resuming (Node has no SSL_CTX_set_num_tickets:
  // TLS 1.3's two tickets are OpenSSL's default whatever the kind).
  if (p.kind !== 'resumption') options.secureOptions = constants.SSL_OP_NO_TICKET;
  if (p.kind === 'mTLS') {
    options.requestCert = true;
    options.rejectUnauthorized = true;
    options.ca = read('ca-cert.pem');
  }
  // The chain and key parsed now, as the server's first connection would:
  // a broken file fails the start and --probe, not every handshake.
  tls.createSecureContext(options);
  return options;
}

// What a connection negotiated, against p; a resumption run's first, full
// handshake is checked as server-auth (tls_bench_sockets::check_server).
// The group is not checked here: Node gives a server none.
function check(socket, p) {
  const resumed = socket.isSessionReused();
  const wanted = p.kind === 'resumption' && !resumed ? 'server-auth' : p.kind;
  const wrong = [];
  const version = socket.getProtocol();
  if (version !== p.protocol) wrong.push(`protocol ${version} (wanted ${p.protocol})`);
  const suite = (socket.getCipher() || {}).standardName;
  if (suite !== p.suite) wrong.push(`suite ${suite} (wanted ${p.suite})`);
  if (resumed !== (wanted === 'resumption')) wrong.push(`resumed ${resumed} (wanted ${wanted === 'resumption'})`);
  const peer = socket.getPeerCertificate();
  const auth = Boolean(peer && Object.keys(peer).length > 0);
  if (auth !== (wanted === 'mTLS')) wrong.push(`client authenticated ${auth} (wanted ${wanted === 'mTLS'})`);
  if (wrong.length > 0) throw new Error(`negotiated ${wrong.join(', ')}`);
  return resumed;
}

function pattern(n) {
  let x = 0x9E3779B97F4A7C15n;
  const mask = (1n << 64n) - 1n;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    x ^= (x << 13n) & mask;
    x ^= x >> 7n;
    x ^= (x << 17n) & mask;
    out[i] = Number(x & 0xffn);
  }
  return out;
}

// Durations as the Rust tools write them: 500ms, 10s, 1m.
function duration(what, text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  if (!m) fail(2, `--${what} ${JSON.stringify(text)}: a duration such as 500ms, 10s or 1m`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}

function positive(what, text, least) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < least) fail(2, `--${what} ${JSON.stringify(text)}: an integer of at least ${least}`);
  return n;
}

// Makes sure the summary can be written before any work (its directory
// created, a file not there before not left behind).
function checkJson(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fs.existsSync(file)) {
    fs.closeSync(fs.openSync(file, 'a'));
  } else {
    fs.closeSync(fs.openSync(file, 'wx'));
    fs.unlinkSync(file);
  }
}

// A failure's kind (tls_bench_results::sockets::ErrorKind's name).
function errorKind(e) {
  const text = `${e.code || ''} ${e.message}`;
  if (/ERR_TLS_HANDSHAKE_TIMEOUT|ETIMEDOUT/.test(text)) return 'timeout';
  if (/ECONNRESET|EPIPE/.test(text)) return 'reset';
  if (/socket hang up|ERR_SSL_UNEXPECTED_EOF|unexpected eof/i.test(text)) return 'closed';
  return 'handshake';
}

// The HTTPS server: every GET answered with body.
function httpsServer(options, body, { handshakeTimeout, idleTimeout, counts }) {
  // Node checks the header timeout every connectionsCheckingInterval
  // (30 s by default): checked often enough that a slow header is closed
  // at the timeout, as the other servers do.
  const connectionsCheckingInterval = Math.max(10, Math.min(1000, idleTimeout / 4));
  const server = https.createServer({ ...options, handshakeTimeout, connectionsCheckingInterval }, (req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length });
    res.end(body, () => {
      counts.requests += 1;
      counts.bytesSent += body.length;
    });
  });
  server.keepAliveTimeout = idleTimeout;
  server.headersTimeout = idleTimeout;
  server.requestTimeout = 0;
  // A header not whole in the idle timeout (slowloris) is answered 408 and
  // closed, counted idle-closed; other malformed requests 400 (Node's own
  // answers, kept since a listener replaces them).
  server.on('clientError', (e, socket) => {
    const timedOut = e.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (timedOut) counts.idleClosed += 1;
    if (socket.writable) {
      socket.end(timedOut ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'
        : 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    }
    socket.destroy();
  });
  server.setTimeout(idleTimeout, (socket) => {
    counts.idleClosed += 1;
    socket.destroy();
  });
  return server;
}

// The echo server: every byte read written back (backpressure: reading
// pauses while a write waits), the client's close_notify answered with
// ours (allowHalfOpen off), an idle connection closed (idle-closed).
function echoServer(options, p, { handshakeTimeout, idleTimeout, counts, failed }) {
  const { ALPNProtocols, ...echoOptions } = options;
  const open = new Set();
  const server = tls.createServer({ ...echoOptions, handshakeTimeout }, (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.setNoDelay(true);
    socket.setTimeout(idleTimeout, () => {
      counts.idleClosed += 1;
      socket.destroy();
    });
    socket.on('data', (chunk) => {
      counts.bytesReceived += chunk.length;
      if (!socket.write(chunk, () => { counts.bytesSent += chunk.length; })) {
        socket.pause();
        socket.once('drain', () => socket.resume());
      }
    });
    socket.on('error', (e) => failed(errorKind(e), e.message.trim()));
  });
  // What https's server has, for the stop.
  server.closeAllConnections = () => open.forEach((socket) => socket.destroy());
  return server;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    process.stdout.write(`${LIBRARY}\n`);
    return;
  }
  if (args.library !== 'node-tls' && args.library !== LIBRARY) {
    fail(2, `--library ${JSON.stringify(args.library)}: this server has only ${LIBRARY} (node-tls)`);
  }
  const p = parseParams(args);
  const certsDir = process.env.TLS_BENCH_CERTS_DIR || args['certs-dir'];
  if (!certsDir) fail(2, '--certs-dir: the certificates\' directory is needed');
  let options;
  try {
    options = tlsOptions(p, certsDir);
  } catch (e) {
    if (args.probe && e instanceof Unsupported) {
      process.stdout.write(`unsupported: ${e.message}\n`);
      return;
    }
    fail(1, `${LIBRARY} ${p.id}: ${e.message}`);
  }
  if (args.probe) {
    process.stdout.write('supported\n');
    return;
  }
  const body = pattern(positive('body', args.body || '1024', 0));
  const maxConnections = positive('max-connections', args['max-connections'] || '10000', 1);
  const handshakeTimeout = duration('handshake-timeout', args['handshake-timeout'] || '10s');
  const idleTimeout = duration('idle-timeout', args['idle-timeout'] || '60s');
  if (args.threads !== undefined) positive('threads', args.threads, 1);
  let cores = [];
  if (args.cores) {
    cores = args.cores.split(',').map((c) => positive('cores', c.trim(), 0));
    try {
      // Every thread of the process (-a): the event loop and libuv's pool.
      execFileSync('taskset', ['-a', '-p', '-c', cores.join(','), String(process.pid)], { stdio: 'ignore' });
    } catch (e) {
      fail(1, `pinning to cores ${cores.join(',')} (taskset): ${e.message}`);
    }
  }
  if (args.json) {
    try {
      checkJson(args.json);
    } catch (e) {
      fail(1, `--json ${args.json}: ${e.message}`);
    }
  }
  const listen = args.listen || '127.0.0.1:4433';
  const at = listen.lastIndexOf(':');
  if (at < 0) fail(2, `--listen ${JSON.stringify(listen)}: an address and a port`);

  const counts = {
    connections: 0, overLimit: 0, full: 0, resumed: 0, idleClosed: 0, requests: 0, bytesReceived: 0, bytesSent: 0,
  };
  const errors = {};
  const examples = [];
  const failed = (kind, message) => {
    errors[kind] = (errors[kind] || 0) + 1;
    if (examples.length < MAX_EXAMPLES) examples.push(`${kind}: ${message}`);
  };

  const server = args.echo
    ? echoServer(options, p, { handshakeTimeout, idleTimeout, counts, failed })
    : httpsServer(options, body, { handshakeTimeout, idleTimeout, counts, failed });
  server.maxConnections = maxConnections;
  server.on('connection', () => { counts.connections += 1; });
  server.on('drop', () => { counts.connections += 1; counts.overLimit += 1; });
  server.on('secureConnection', (socket) => {
    try {
      if (check(socket, p)) counts.resumed += 1; else counts.full += 1;
    } catch (e) {
      failed('negotiated', e.message);
      socket.destroy();
    }
  });
  // A listener here keeps Node from closing the socket itself: closed.
  server.on('tlsClientError', (e, socket) => {
    failed(errorKind(e), e.message.trim());
    socket.destroy();
  });

  const started = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  const samples = [Math.round(process.memoryUsage.rss() / 1024)];
  const sampler = setInterval(() => samples.push(Math.round(process.memoryUsage.rss() / 1024)), RSS_INTERVAL_MS);

  let bound = listen;
  const stop = () => {
    clearInterval(sampler);
    server.close();
    server.closeAllConnections();
    samples.push(Math.round(process.memoryUsage.rss() / 1024));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const used = process.cpuUsage(cpuStart);
    const cpu = (used.user + used.system) / 1e6;
    const handshakes = counts.full + counts.resumed;
    const summary = {
      library: LIBRARY,
      parameters: p.id,
      listen: bound,
      seconds,
      connections: counts.connections,
      over_limit: counts.overLimit,
      evicted: 0,
      handshakes_full: counts.full,
      handshakes_resumed: counts.resumed,
      idle_closed: counts.idleClosed,
      requests: counts.requests,
      http2: 0,
      bytes_received: counts.bytesReceived,
      bytes_sent: counts.bytesSent,
      cpu_seconds: cpu,
      cpu_us_per_handshake: handshakes > 0 ? (cpu / handshakes) * 1e6 : null,
      cores,
      errors,
      error_examples: examples,
      // The tools compute the trace's figures from the samples (RssTrace::of).
      rss: {
        interval_s: RSS_INTERVAL_MS / 1000,
        samples_kib: samples,
        start_kib: samples[0],
        peak_kib: Math.max(...samples),
        end_kib: samples[samples.length - 1],
        slope_last_half_kib_per_min: null,
      },
    };
    process.stdout.write(`${LIBRARY}: ${counts.connections} connections, ${counts.full} full and ${counts.resumed} `
      + `resumed handshakes, ${counts.requests} requests in ${seconds.toFixed(1)} s; ${cpu.toFixed(2)} CPU s; `
      + `errors ${JSON.stringify(errors)}\n`);
    if (args.json) {
      try {
        fs.writeFileSync(args.json, `${JSON.stringify(summary, null, 2)}\n`);
      } catch (e) {
        fail(1, `writing --json ${args.json}: ${e.message}`);
      }
    }
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  server.on('error', (e) => fail(1, `serving on ${listen}: ${e.message}`));
  server.listen(Number(listen.slice(at + 1)), listen.slice(0, at).replace(/^\[|\]$/g, ''), () => {
    const a = server.address();
    bound = `${a.address}:${a.port}`;
    const what = args.echo ? 'echo' : `HTTPS, ${body.length} B bodies`;
    process.stdout.write(`serving ${LIBRARY} ${what}, ${p.id} on ${a.address}:${a.port}\n`);
  });
}

main();
