//! Servers of other runtimes: programs in `crates/sockets/runtimes/<name>/`
//! that take `https-serve`'s command line and speak its protocol with the
//! tools ([`crate::child`]: `--list`, `--probe`, `serving ... on ADDR`, a
//! `--json` summary at SIGTERM). Each is built here from its source with
//! its runtime's own toolchain and then runs as one more [`Build`] beside
//! the other build variants' servers, in the same rounds (`https-compare
//! --runtimes`). docs/https.md, "Other runtimes", says what each checks and
//! counts.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use anyhow::{Context, Result, bail};

use crate::child::Build;

/// One runtime's server.
pub struct Runtime {
    /// Its name (`--runtimes go`), also its folder under
    /// `crates/sockets/runtimes/` and the variant its rows name.
    pub name: &'static str,
    /// What serves, for people.
    pub what: &'static str,
    /// Its toolchain's program on this machine, if any.
    toolchain: fn() -> Option<PathBuf>,
    /// Builds `exe` from the sources in `src` with the toolchain's
    /// program. Errors: the build failed, with the toolchain's output.
    build: fn(toolchain: &Path, src: &Path, exe: &Path) -> Result<()>,
    /// What a machine needs to build it, named when the build cannot start.
    needs: &'static str,
    /// The folders under `crates/sockets/runtimes/` its build reads: its
    /// own first, then any it shares (the JSS server is the Java one with
    /// another engine).
    folders: &'static [&'static str],
}

/// Every runtime, in the order rows take.
pub const RUNTIMES: [Runtime; 5] = [
    Runtime {
        name: "go",
        what: "Go's crypto/tls and net/http",
        toolchain: go,
        build: go_build,
        needs: "Go 1.25 or later: `go` on PATH or /usr/local/go/bin/go (https://go.dev/dl; Debian's \
                golang-go 1.19 is too old)",
        folders: &["go"],
    },
    Runtime {
        name: "node",
        what: "Node.js's tls and https (OpenSSL under libuv)",
        toolchain: || on_path("node"),
        build: node_build,
        needs: "Node.js 18.6 or later: `node` on PATH (Debian's nodejs, or https://nodejs.org)",
        folders: &["node"],
    },
    Runtime {
        name: "java",
        what: "Java's SunJSSE behind an SSLServerSocket, a thread per connection",
        toolchain: || on_path("javac").filter(|_| on_path("java").is_some()),
        build: java_build,
        needs: "a JDK 17 or later: `javac` and `java` on PATH (Debian's openjdk-17-jdk-headless)",
        folders: &["java"],
    },
    Runtime {
        name: "jss",
        what: "Mozilla JSS's SSLSocket (NSS), a thread per connection",
        toolchain: || on_path("javac").filter(|_| on_path("java").is_some() && jss_installed()),
        build: jss_build,
        needs: "a JDK 17 or later and Mozilla JSS with NSS's tools: `javac`, `java`, `certutil` and \
                `pk12util` on PATH, /usr/share/java/jss.jar and /usr/lib/jss/libjss.so (Debian's \
                openjdk-17-jdk-headless, libjss-java, libslf4j-java and libnss3-tools; \
                scripts/setup-runtimes.sh)",
        folders: &["jss", "java"],
    },
    Runtime {
        name: "erlang",
        what: "Erlang/OTP's ssl (its TLS state machine in Erlang), a process per connection",
        toolchain: || on_path("erlc").filter(|_| on_path("erl").is_some()),
        build: erlang_build,
        needs: "Erlang/OTP 25 or later with its ssl application: `erlc` and `erl` on PATH (Debian's \
                erlang-nox)",
        folders: &["erlang"],
    },
];

/// The version of the build steps written here (the wrappers, the
/// toolchains' options), part of every build's key: raised when they
/// change, so a build made by the old steps is not reused.
const RECIPE: u32 = 2;

/// Removes the build directories (`.build-PID-...`) under `parent` of
/// processes no longer running: a build whose tool was killed (SIGKILL)
/// mid-way. Failures are left alone: the next build tries again.
fn remove_abandoned_builds(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(".build-").and_then(|r| r.split('-').next()) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && crate::process::state(pid).is_none() {
            let _removed = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `program` on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Runs `cmd`, the `what` step of a runtime's build. Errors: it cannot
/// start, or fails (with its standard error).
/// The toolchain runs as the servers do ([`super::interrupt::spawn`]): it
/// dies with the tool, a SIGKILL of the tool included (no `javac` left
/// compiling), and a signal stops it.
fn run(mut cmd: Command, what: &str) -> Result<()> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = super::interrupt::spawn(&mut cmd).with_context(|| format!("starting {what}"))?;
    let pid = child.id();
    let out = child.wait_with_output().with_context(|| format!("waiting for {what}"));
    super::interrupt::forget_id(pid);
    let out = out?;
    if !out.status.success() {
        bail!("{what} failed:\n{}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// `go` on PATH, else the official installer's /usr/local/go/bin/go.
fn go() -> Option<PathBuf> {
    on_path("go").or_else(|| Some(PathBuf::from("/usr/local/go/bin/go")).filter(|p| p.is_file()))
}

/// `go build` of the Go server: the standard library only, no module
/// downloaded, the toolchain on the machine (`GOTOOLCHAIN=local`: no
/// download of a newer one), the certificates' directory built in.
fn go_build(go: &Path, src: &Path, exe: &Path) -> Result<()> {
    let mut cmd = Command::new(go);
    cmd.current_dir(src)
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .env("GOWORK", "off")
        .arg("build")
        .arg("-o")
        .arg(exe)
        .arg("-ldflags")
        .arg(format!("-X main.certsDir={}", tls_bench_harness::certs::CERTS_DIR))
        .arg(".");
    run(cmd, "go build")
}

/// The Node.js server: `main.js` checked (`node --check`), the version
/// checked (18.6 brought the server's `drop` event), and `exe` a shell
/// wrapper that runs it with the certificates' directory.
fn node_build(node: &Path, src: &Path, exe: &Path) -> Result<()> {
    let main = src.join("main.js");
    let mut check = Command::new(node);
    check.arg("--check").arg(&main);
    run(check, "node --check main.js")?;
    let mut version = Command::new(node);
    version.args([
        "-e",
        "const [a, b] = process.versions.node.split('.').map(Number); \
                         process.exit(a > 18 || (a === 18 && b >= 6) ? 0 : 1)",
    ]);
    run(version, "checking Node.js's version (18.6 or later)")?;
    wrapper(exe, &[quoted(node)?, quoted(&main)?])
}

/// The Java server: `HttpsServe.java` compiled (`javac --release 17`) into
/// `classes/` beside `exe`, and `exe` a shell wrapper that runs it with the
/// certificates' directory.
fn java_build(javac: &Path, src: &Path, exe: &Path) -> Result<()> {
    let classes = exe.with_file_name("classes");
    let mut cmd = Command::new(javac);
    cmd.args(["--release", "17", "-nowarn", "-d"]).arg(&classes).arg(src.join("HttpsServe.java"));
    run(cmd, "javac HttpsServe.java")?;
    let java = on_path("java").context("java is not on PATH")?;
    wrapper(exe, &[quoted(&java)?, "-cp".into(), format!("{BESIDE}classes"), "HttpsServe".into()])
}

/// Debian's JSS: its jar, the jars it loads, and its JNI library.
const JSS_JARS: [&str; 4] = [
    "/usr/share/java/jss.jar",
    "/usr/share/java/commons-lang3.jar",
    "/usr/share/java/slf4j-api.jar",
    "/usr/share/java/slf4j-nop.jar",
];
const JSS_LIBRARY_DIR: &str = "/usr/lib/jss";

/// Whether JSS and NSS's tools are installed ([`JSS_JARS`], libjss.so,
/// `certutil`, `pk12util`).
fn jss_installed() -> bool {
    JSS_JARS.iter().all(|jar| Path::new(jar).is_file())
        && Path::new(JSS_LIBRARY_DIR).join("libjss.so").is_file()
        && on_path("certutil").is_some()
        && on_path("pk12util").is_some()
}

/// The JSS server: `jss/JssServe.java` and the Java server it runs
/// (`java/HttpsServe.java`) compiled against JSS into `classes/` beside
/// `exe`, and `exe` a shell wrapper that runs it with JSS's jars and
/// library, the certificates' directory, and `nss/` beside it for the NSS
/// databases the server makes (one per start, removed at its stop).
fn jss_build(javac: &Path, src: &Path, exe: &Path) -> Result<()> {
    let classes = exe.with_file_name("classes");
    let java_src = src.with_file_name("java").join("HttpsServe.java");
    let mut cmd = Command::new(javac);
    cmd.args(["--release", "17", "-nowarn", "-cp", JSS_JARS[0], "-d"])
        .arg(&classes)
        .arg(java_src)
        .arg(src.join("JssServe.java"));
    run(cmd, "javac JssServe.java HttpsServe.java")?;
    let java = on_path("java").context("java is not on PATH")?;
    let mut class_path = format!("{BESIDE}classes");
    for jar in JSS_JARS {
        class_path.push(':');
        class_path.push_str(&quoted(Path::new(jar))?);
    }
    wrapper(
        exe,
        &[
            quoted(&java)?,
            format!("-Djava.library.path={}", quoted(Path::new(JSS_LIBRARY_DIR))?),
            "-cp".into(),
            class_path,
            "JssServe".into(),
            "--nss-work".into(),
            format!("{BESIDE}nss"),
        ],
    )
}

/// The Erlang server: `https_serve.erl` compiled (`erlc`) into `ebin/`
/// beside `exe`, and `exe` a shell wrapper that starts the VM on it with
/// the certificates' directory (`+Bi`: SIGINT, the VM's break signal,
/// ignored; the server stops on SIGTERM).
fn erlang_build(erlc: &Path, src: &Path, exe: &Path) -> Result<()> {
    let ebin = exe.with_file_name("ebin");
    std::fs::create_dir_all(&ebin).with_context(|| format!("creating {}", ebin.display()))?;
    let mut cmd = Command::new(erlc);
    cmd.arg("-o").arg(&ebin).arg(src.join("https_serve.erl"));
    run(cmd, "erlc https_serve.erl")?;
    let erl = on_path("erl").context("erl is not on PATH")?;
    // A VM that crashes writes its dump beside the build, not into the
    // caller's working directory.
    let mut words = vec!["env".to_string(), format!("ERL_CRASH_DUMP={BESIDE}erl_crash.dump"), quoted(&erl)?];
    words.extend(["-noshell", "+Bi", "-pa"].map(String::from));
    words.push(format!("{BESIDE}ebin"));
    words.extend(["-s", "https_serve", "start", "-extra"].map(String::from));
    wrapper(exe, &words)
}

/// `path` as one shell word (single-quoted). Errors: it holds a quote.
fn quoted(path: &Path) -> Result<String> {
    let text = path.display().to_string();
    anyhow::ensure!(!text.contains('\''), "{text}: a path with a quote");
    Ok(format!("'{text}'"))
}

/// The start of a shell word naming a file in the wrapper's own directory
/// (so a build directory can be moved into place whole, [`Runtime::build`]).
const BESIDE: &str = "\"$(dirname \"$0\")\"/";

/// Writes `exe`, a shell script that runs `words` (shell words, quoted)
/// with `--certs-dir <the repository's certs/>` and its own arguments.
/// Errors: the file cannot be written.
fn wrapper(exe: &Path, words: &[String]) -> Result<()> {
    let script = format!(
        "#!/bin/sh\n# Written by tls-bench (crates/sockets/src/runtimes.rs).\nexec {} --certs-dir {} \"$@\"\n",
        words.join(" "),
        quoted(Path::new(tls_bench_harness::certs::CERTS_DIR))?
    );
    std::fs::write(exe, script).with_context(|| format!("writing {}", exe.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(exe, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", exe.display()))
}

/// The runtimes `names` selects, in [`RUNTIMES`]' order: `all` (or no
/// name: the default), `none`, or names from [`RUNTIMES`]. Errors: a name
/// that is none of these, naming the valid ones; a runtime selected whose
/// toolchain this machine lacks, naming what to install (checked here,
/// before any work; [`Runtime::build`] says it again if the toolchain goes
/// meanwhile).
pub fn select(names: &[String]) -> Result<Vec<&'static Runtime>> {
    let chosen = named(names)?;
    for runtime in &chosen {
        if !runtime.installed() {
            bail!(
                "the {} server needs {}; or leave it out (--runtimes none, or name the others)",
                runtime.name,
                runtime.needs
            );
        }
    }
    Ok(chosen)
}

/// The runtimes `names` names ([`select`], without the toolchains'
/// check).
fn named(names: &[String]) -> Result<Vec<&'static Runtime>> {
    // The value as given (clap split it at its commas).
    let given = names.join(",");
    if names.iter().any(|n| n.trim().is_empty()) {
        bail!("--runtimes {given:?}: an empty name in the list (a comma too many?)");
    }
    if names.len() > 1
        && let Some(word) = names.iter().find(|n| *n == "all" || *n == "none")
    {
        bail!("--runtimes {given:?}: {word} stands alone; name runtimes, or give all or none");
    }
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(RUNTIMES.iter().collect());
    }
    for name in names {
        if name != "none" && !RUNTIMES.iter().any(|r| r.name == name) {
            let valid: Vec<&str> = RUNTIMES.iter().map(|r| r.name).collect();
            bail!("--runtimes {name:?}: valid values are {}, all and none", valid.join(", "));
        }
    }
    Ok(RUNTIMES.iter().filter(|r| names.iter().any(|n| n == r.name)).collect())
}

/// Where the runtimes' servers are set up: `target/runtimes/` of the
/// repository (or of `CARGO_TARGET_DIR`).
pub fn dir() -> PathBuf {
    tls_bench_harness::paths::target_dir().join("runtimes")
}

/// The servers of the runtimes `names` selects ([`select`]), each set up
/// under [`dir`] ([`Runtime::build`]), saying so on stderr. Errors: as
/// [`select`] and [`Runtime::build`].
pub fn servers(names: &[String]) -> Result<Vec<Build>> {
    let mut built = Vec::new();
    for runtime in select(names)? {
        eprintln!("setting up the {} server ({})", runtime.name, runtime.what);
        built.push(runtime.build(&dir())?);
    }
    Ok(built)
}

impl Runtime {
    /// What its build is made from: the names and bytes of the sources in
    /// each of its folders, the toolchain's path and the certificates'
    /// directory, hashed. Errors: the sources cannot be read.
    fn key(&self, toolchain: &Path) -> Result<u64> {
        use std::hash::{Hash, Hasher};
        let mut files = Vec::new();
        for folder in self.folders {
            let src = self.sources().with_file_name(folder);
            let mut these: Vec<PathBuf> = std::fs::read_dir(&src)
                .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
                .with_context(|| format!("reading {}", src.display()))?;
            these.sort();
            files.extend(these);
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for file in files {
            file.file_name().hash(&mut hasher);
            std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?.hash(&mut hasher);
        }
        toolchain.hash(&mut hasher);
        tls_bench_harness::certs::CERTS_DIR.hash(&mut hasher);
        RECIPE.hash(&mut hasher);
        Ok(hasher.finish())
    }

    /// Whether this machine has its toolchain.
    pub fn installed(&self) -> bool {
        (self.toolchain)().is_some()
    }

    /// The folder of its sources.
    pub fn sources(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("runtimes").join(self.name)
    }

    /// Builds its server into `dir/<name>/<key>/https-serve` (unless it is
    /// there: the key hashes the sources and the toolchain) and reads which
    /// library it serves (`--list`). Errors: the toolchain is missing
    /// (naming what to install), the build fails (with the toolchain's
    /// output), or the server does not list its library.
    pub fn build(&self, dir: &Path) -> Result<Build> {
        let Some(toolchain) = (self.toolchain)() else {
            // No option named: the callers' options differ (--runtimes,
            // https-attack's --runtime); select() says it with its own.
            bail!("the {} server needs {}", self.name, self.needs)
        };
        // One directory per version of the sources and toolchain, built
        // aside and moved into place whole: a build never rewrites files a
        // running server (another run's, or a test's beside) reads.
        let parent = dir.join(self.name);
        let home = parent.join(format!("{:016x}", self.key(&toolchain)?));
        let exe = home.join("https-serve");
        if !exe.is_file() {
            remove_abandoned_builds(&parent);
            let aside =
                parent.join(format!(".build-{}-{:?}", std::process::id(), std::thread::current().id()));
            let _ = std::fs::remove_dir_all(&aside);
            std::fs::create_dir_all(&aside).with_context(|| format!("creating {}", aside.display()))?;
            // A signal during the build leaves no half-built directory.
            super::interrupt::remove_on_exit(&aside);
            let built =
                (self.build)(&toolchain, &self.sources(), &aside.join("https-serve")).with_context(|| {
                    format!(
                        "building the {} server ({}); it needs {}",
                        self.name,
                        self.sources().display(),
                        self.needs
                    )
                });
            if built.is_err() {
                let _removed = std::fs::remove_dir_all(&aside);
                super::interrupt::keep(&aside);
            }
            built?;
            let moved = std::fs::rename(&aside, &home);
            super::interrupt::keep(&aside);
            if let Err(e) = moved {
                // Another build moved the same one into place first.
                std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
                if !exe.is_file() {
                    return Err(e).with_context(|| format!("moving {} into place", home.display()));
                }
            }
        }
        let build = Build::read(self.name, &exe)?;
        if build.libraries.is_empty() {
            bail!("{} --list names no library", exe.display());
        }
        Ok(build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_takes_all_none_or_names_and_refuses_others() {
        let names = |v: &[&str]| {
            named(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .map(|r| r.iter().map(|r| r.name).collect::<Vec<_>>())
        };
        assert_eq!(names(&[]).unwrap(), ["go", "node", "java", "jss", "erlang"]);
        assert_eq!(names(&["none"]).unwrap(), Vec::<&str>::new());
        assert_eq!(names(&["all"]).unwrap(), ["go", "node", "java", "jss", "erlang"]);
        assert_eq!(names(&["java", "go"]).unwrap(), ["go", "java"]);
        assert_eq!(names(&["go"]).unwrap(), ["go"]);
        let e = names(&["python"]).unwrap_err().to_string();
        assert!(e.contains("\"python\"") && e.contains("go, node, java, jss, erlang, all and none"), "{e}");
        // Contradictions and empty names are refused, quoting the value given.
        let e = names(&["none", "go"]).unwrap_err().to_string();
        assert!(e.contains("\"none,go\"") && e.contains("none stands alone"), "{e}");
        let e = names(&["go", "all"]).unwrap_err().to_string();
        assert!(e.contains("all stands alone"), "{e}");
        let e = names(&["go", ""]).unwrap_err().to_string();
        assert!(e.contains("\"go,\"") && e.contains("an empty name"), "{e}");
    }

    #[test]
    fn every_runtime_has_its_sources() {
        for r in &RUNTIMES {
            assert!(r.sources().is_dir(), "{}", r.sources().display());
        }
    }
}
