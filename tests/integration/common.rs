//! Shared helpers: fixture copies, vault snapshots, running the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mdvault::config::{Config, EmbeddingBackend, Overrides, VaultSettings};
use mdvault::vault::Vault;

/// The committed fixture vault.
pub fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault")
}

/// A private copy of a folder tree, deleted when dropped.
pub struct TempVault {
    pub dir: tempfile::TempDir,
}

impl TempVault {
    /// A copy of the fixture vault.
    pub fn fixture() -> TempVault {
        TempVault::copy_of(&fixture_root())
    }

    /// A copy of any folder.
    pub fn copy_of(src: &Path) -> TempVault {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(src, dir.path());
        TempVault { dir }
    }

    /// An empty vault.
    pub fn empty() -> TempVault {
        TempVault { dir: tempfile::tempdir().unwrap() }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn open(&self) -> Vault {
        Vault::open("test", self.root(), &settings()).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// Every file and folder with its bytes, for byte-identical comparisons.
    pub fn snapshot(&self) -> BTreeMap<String, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        for entry in walkdir::WalkDir::new(self.root()).min_depth(1).sort_by_file_name() {
            let entry = entry.unwrap();
            let rel =
                entry.path().strip_prefix(self.root()).unwrap().to_string_lossy().into_owned();
            let bytes = if entry.file_type().is_file() {
                Some(std::fs::read(entry.path()).unwrap())
            } else {
                None
            };
            out.insert(rel, bytes);
        }
        out
    }
}

/// The local model folder: `MDVAULT_MODEL_DIR`, else the default data directory's.
pub fn model_dir() -> PathBuf {
    std::env::var_os("MDVAULT_MODEL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".local/share/mdvault/models/all-MiniLM-L6-v2")
    })
}

/// A configuration with defaults, one vault named `fixture`, and the given data directory.
pub fn test_config(vault: &Path, data: &Path) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let env = [("HOME", dir.path().to_str().unwrap())];
    let overrides = Overrides {
        vaults: vec![format!("fixture={}", vault.display())],
        data_dir: Some(data.to_path_buf()),
        config_file: Some(PathBuf::new()),
    };
    let mut c = mdvault::config::load(&overrides, &env).unwrap();
    c.embedding.backend = EmbeddingBackend::Local { model_dir: model_dir() };
    c
}

pub fn settings() -> VaultSettings {
    VaultSettings {
        doc_suffixes: vec![".pdf".into()],
        doc_files_dir: "Files".into(),
        doc_ocr: false,
        doc_max_bytes: 50 * 1024 * 1024,
        timestamp_key: "timestamp".into(),
    }
}

pub fn copy_tree(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src).min_depth(1) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(src).unwrap();
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if entry.file_type().is_file() {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `mdvault` with a clean environment (no user config) and optional stdin.
pub fn mdvault(args: &[&str], stdin: Option<&str>) -> Output {
    mdvault_with(args, &[], stdin)
}

/// Runs `mdvault` with a clean environment plus `env`, and optional stdin.
pub fn mdvault_with(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdvault"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The API key every test server runs with.
pub const KEY: &str = "test-key-0123456789";

/// A running `mdvault serve` on a free loopback port, over its own data directory; killed when
/// dropped. `vaults` are `NAME=PATH` specs, the first the default.
pub struct Server {
    child: std::process::Child,
    pub base: String,
    /// The data directory it serves from.
    pub data: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Server {
    /// Starts the server and waits until `/readyz` says the index is ready (up to 3 minutes).
    pub fn start(vaults: &[String], env: &[(&str, &str)]) -> Server {
        let s = Server::spawn(vaults, env);
        s.wait_ready();
        s
    }

    /// Starts the server over an existing data directory (shared with other processes) and
    /// waits until it is ready.
    pub fn start_in(vaults: &[String], env: &[(&str, &str)], data_dir: &Path) -> Server {
        let s = Server::spawn_in(vaults, env, Some(data_dir));
        s.wait_ready();
        s
    }

    /// Starts the server and waits only for the port (`/healthz`).
    pub fn spawn(vaults: &[String], env: &[(&str, &str)]) -> Server {
        Server::spawn_in(vaults, env, None)
    }

    fn spawn_in(vaults: &[String], env: &[(&str, &str)], data_dir: Option<&Path>) -> Server {
        Server::launch(vaults, env, &Launch { data_dir, ..Launch::default() })
    }

    /// Starts the server as `launch` says and waits only for the port (`/healthz`).
    pub fn launch(vaults: &[String], env: &[(&str, &str)], launch: &Launch) -> Server {
        let port = free_port();
        let data = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let bin = env!("CARGO_BIN_EXE_mdvault");
        let mut cmd = match launch.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(launch.data_dir.unwrap_or(data.path()));
        for v in vaults {
            cmd.arg("--vault").arg(v);
        }
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("MDVAULT_API_KEY", KEY)
            .env("MDVAULT_EMBEDDING__MODEL_DIR", model_dir())
            .env("MDVAULT_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(log) = launch.log {
            cmd.stderr(std::fs::File::create(log).unwrap());
        }
        if let Some(limit) = launch.fd_limit {
            use std::os::unix::process::CommandExt;
            let lim = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: limit as _ };
            // SAFETY: between fork and exec the closure calls only setrlimit, which is
            // async-signal-safe, on a value it owns. Lowering both limits needs no privilege.
            unsafe {
                cmd.pre_exec(move || {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let child = cmd.spawn().unwrap();
        let s = Server { child, base: format!("http://127.0.0.1:{port}"), data, _home: home };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if ureq::get(&format!("{}/healthz", s.base)).call().is_ok() {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the server did not answer /healthz within 60 s");
    }

    /// Waits until `/readyz` answers 200 and every vault's index.md has had its first pass
    /// (so no test's vault snapshot races the generator's first write).
    pub fn wait_ready(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
        while std::time::Instant::now() < deadline {
            if self.get("/readyz").0 == 200 && self.index_md_scanned() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the server was not ready within 180 s: {}", self.get("/readyz").1);
    }

    /// True once every vault's index.md generator has finished its first full scan.
    pub fn index_md_scanned(&self) -> bool {
        let (_, body) = self.get("/readyz");
        let Ok(j) = serde_json::from_str::<serde_json::Value>(&body) else { return false };
        j["index_md"]["vaults"]
            .as_array()
            .is_some_and(|list| list.iter().all(|v| v["scanned"] == true))
    }

    /// Waits (up to a minute) for the first index.md pass, whatever the index is doing.
    pub fn wait_index_md(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !self.index_md_scanned() {
            assert!(std::time::Instant::now() < deadline, "index.md was never scanned");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Sends a request with the test key; returns status, body and headers.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        http_call(&self.base, method, path, Some(KEY), headers, body)
    }

    /// The most memory the server's process has held so far (`VmHWM`), in bytes.
    #[cfg(target_os = "linux")]
    pub fn peak_resident(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    /// Sends SIGTERM and waits (up to a minute) for the process to end; how long it took.
    pub fn terminate(&mut self) -> std::time::Duration {
        let started = std::time::Instant::now();
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: `pid` is this test's own child, not yet reaped, so it names that process.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        while self.child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < std::time::Duration::from_secs(60), "never ended");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        started.elapsed()
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        let r = self.call("GET", path, &[], None);
        (r.status, r.body)
    }
}

/// How to start a server beyond its vaults and environment ([`Server::launch`]).
#[derive(Default)]
pub struct Launch<'a> {
    /// Serve this data directory (shared with other processes) instead of a fresh one.
    pub data_dir: Option<&'a Path>,
    /// The open-file limit, soft and hard, the server starts under (as `ulimit -n` in a shell
    /// would set it): the server can raise neither.
    pub fd_limit: Option<u64>,
    /// Write the server's log (its standard error) to this file instead of the test's.
    pub log: Option<&'a Path>,
    /// Start it as the last arguments of this program and its arguments (one that sets
    /// something up, a mount namespace say, then runs the rest).
    pub wrapper: &'a [&'a str],
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// The body as text (invalid UTF-8 replaced).
    pub body: String,
    pub headers: Vec<(String, String)>,
    /// The body as sent: an image's bytes.
    pub bytes: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The refusal code of a `{"code","error"}` body.
    pub fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or("").to_string()
    }
}

/// One raw HTTP/1.1 request over a fresh TCP connection: any method, any header (a forged
/// Host included), any bytes as the path, which an HTTP client library would normalise away.
pub fn http_call(
    base: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Reply {
    use std::io::{Read, Write};
    let authority = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(120))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {authority}\r\n"));
    }
    if let Some(k) = key {
        req.push_str(&format!("Authorization: Bearer {k}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.unwrap_or_default();
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(req.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

/// An HTTP/1.1 answer as read off the wire, its chunked body joined.
pub fn parse_response(raw: &[u8]) -> Reply {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("no header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
            let size_text = String::from_utf8_lossy(&rest[..end]);
            let size =
                usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[end + 2..end + 2 + size]);
            rest = &rest[end + 2 + size + 2..];
        }
        body = out;
    }
    Reply { status, body: String::from_utf8_lossy(&body).into_owned(), headers, bytes: body }
}

/// A port nobody is listening on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// An HTTP embedder at a closed port: every index build attempt fails after its words are
/// committed and the next one waits a minute, so a server using it stays `building`, with
/// search answering by words only.
pub struct DeadEmbedder {
    url: String,
}

impl DeadEmbedder {
    pub fn at_a_closed_port() -> DeadEmbedder {
        DeadEmbedder { url: format!("http://127.0.0.1:{}/v1", free_port()) }
    }

    /// The server environment that selects it.
    pub fn env(&self) -> Vec<(&str, &str)> {
        vec![
            ("MDVAULT_EMBEDDING__BACKEND", "http"),
            ("MDVAULT_EMBEDDING__URL", self.url.as_str()),
            ("MDVAULT_EMBEDDING__MODEL", "m"),
            ("MDVAULT_EMBEDDING__DIMS", "8"),
            ("MDVAULT_EMBEDDING__MAX_ATTEMPTS", "1"),
            ("MDVAULT_INDEX__BUILD_RETRY_SECONDS", "60"),
        ]
    }
}

/// An OpenAI-style `/v1/embeddings` endpoint on loopback that answers every request (until the
/// test process ends) with `dims`-wide vectors made from each input's bytes: a real HTTP
/// embedder for the CLI to switch to, ask for its width and time.
pub fn fake_embedding_endpoint(dims: usize) -> String {
    fake_embedding_endpoint_slow(dims, "", std::time::Duration::ZERO)
}

/// [`fake_embedding_endpoint`], but a request with an input containing `marker` is answered
/// only after `delay` (each connection has its own thread, so other requests do not wait).
pub fn fake_embedding_endpoint_slow(
    dims: usize,
    marker: &'static str,
    delay: std::time::Duration,
) -> String {
    serve_embeddings(dims, marker, delay, None)
}

/// Every input an embedding endpoint was sent, in arrival order, across every process that
/// used it.
pub type Embedded = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// [`fake_embedding_endpoint`] that also records every input it is sent: to count how often a
/// text was embedded, whichever process asked.
pub fn counting_embedding_endpoint(dims: usize) -> (String, Embedded) {
    let seen = Embedded::default();
    (serve_embeddings(dims, "", std::time::Duration::ZERO, Some(seen.clone())), seen)
}

/// [`fake_embedding_endpoint_slow`] that also records every input, in the order it came.
pub fn recording_embedding_endpoint_slow(
    dims: usize,
    marker: &'static str,
    delay: std::time::Duration,
) -> (String, Embedded) {
    let seen = Embedded::default();
    (serve_embeddings(dims, marker, delay, Some(seen.clone())), seen)
}

fn serve_embeddings(
    dims: usize,
    marker: &'static str,
    delay: std::time::Duration,
    record: Option<Embedded>,
) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/embeddings", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let record = record.clone();
            std::thread::spawn(move || answer_embedding(stream, dims, marker, delay, record));
        }
    });
    url
}

fn answer_embedding(
    mut stream: std::net::TcpStream,
    dims: usize,
    marker: &str,
    delay: std::time::Duration,
    record: Option<Embedded>,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let inputs = req["input"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(record) = &record {
        let mut seen = record.lock().unwrap();
        seen.extend(inputs.iter().map(|t| t.as_str().unwrap_or("").to_string()));
    }
    if !marker.is_empty() && inputs.iter().any(|t| t.as_str().unwrap_or("").contains(marker)) {
        std::thread::sleep(delay);
    }
    let rows: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut v = vec![0.0f32; dims];
            for (n, b) in t.as_str().unwrap_or("").bytes().enumerate() {
                v[(b as usize + n) % dims] += 1.0;
            }
            v[0] += 1.0;
            serde_json::json!({ "index": i, "embedding": v })
        })
        .collect();
    let reply = serde_json::json!({ "data": rows }).to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{reply}",
        reply.len()
    );
}
