//! The remote embedder: an OpenAI-compatible `/v1/embeddings` endpoint called over blocking HTTP.
//!
//! Texts go out in batches of `batch_size`; each batch is retried on its own with capped
//! exponential backoff when the failure may pass (5xx, 408, 425, 429, transport errors, timeouts,
//! a reply without usable `data`), and fails at once when it will not (other 4xx, a short reply,
//! vectors of the wrong width). Rows come back sorted by `index` and L2-normalised.
//! Defaults for the settings live in the config module, not here; the sleep between attempts is
//! injectable so tests never wait.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{EmbedError, l2_normalise};

/// How many characters of an error reply's body a message quotes.
const BODY_SNIPPET: usize = 200;

/// The largest reply body read; 64 rows of 4096 floats as JSON stay well below it.
const MAX_REPLY_BYTES: u64 = 256 * 1024 * 1024;

/// Connecting never gets more than this, even when the whole-request timeout is longer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings for an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HttpConfig {
    /// The full endpoint, e.g. `http://127.0.0.1:8096/v1/embeddings`.
    pub(crate) url: String,
    /// The `model` field sent with every request.
    pub(crate) model: String,
    /// The vector width the model must answer with.
    pub(crate) dims: usize,
    /// Texts per request.
    pub(crate) batch_size: usize,
    /// Requests per batch before giving up (1 means no retry).
    pub(crate) max_attempts: u32,
    /// The first wait between attempts, in seconds; it doubles each time.
    pub(crate) backoff_seconds: f64,
    /// The longest wait between attempts, in seconds.
    pub(crate) backoff_max_seconds: f64,
    /// The whole-request timeout, in seconds (0 means no limit).
    pub(crate) timeout_seconds: f64,
    /// Sent as `Authorization: Bearer <key>` when set.
    pub(crate) api_key: Option<String>,
}

/// Sleeps between attempts; replaced in tests.
type Sleeper = Box<dyn Fn(Duration) + Send + Sync>;

/// A client for one embeddings endpoint.
pub struct HttpEmbedder {
    cfg: HttpConfig,
    agent: ureq::Agent,
    model_id: String,
    sleep: Sleeper,
}

/// One failed attempt, by what should happen next.
enum Failure {
    /// It may pass: wait and send the batch again.
    Retry(String),
    /// The endpoint refused (or the request cannot be made): give up, naming this.
    Refused(String),
    /// The reply is wrong in a way that repeating will not fix.
    Fatal(EmbedError),
}

/// The body of an OpenAI-compatible embeddings request: `{"model", "input": [texts]}`. `model
/// list`'s dimension probe sends the same.
#[derive(Serialize)]
pub(crate) struct EmbeddingRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) input: &'a [&'a str],
}

#[derive(Deserialize)]
struct Reply {
    data: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl HttpEmbedder {
    /// A client for `cfg.url`; nothing is sent until [`HttpEmbedder::embed`].
    pub(crate) fn new(cfg: HttpConfig) -> HttpEmbedder {
        let timeout = Some(seconds(cfg.timeout_seconds)).filter(|t| !t.is_zero());
        let agent = ureq::Agent::config_builder()
            .timeout_global(timeout)
            .timeout_connect(Some(timeout.map_or(CONNECT_TIMEOUT, |t| t.min(CONNECT_TIMEOUT))))
            // Statuses are classified here (retry or not), so they must arrive as responses.
            .http_status_as_error(false)
            .user_agent(concat!("mdvault/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        let model_id = format!("http:{}@{}", cfg.model, cfg.dims);
        HttpEmbedder { cfg, agent, model_id, sleep: Box::new(std::thread::sleep) }
    }

    /// Replaces the pause between attempts (the test seam: record instead of waiting).
    #[cfg(test)]
    pub(crate) fn with_sleep(
        mut self,
        sleep: impl Fn(Duration) + Send + Sync + 'static,
    ) -> HttpEmbedder {
        self.sleep = Box::new(sleep);
        self
    }

    /// The configured vector width.
    pub(crate) fn dims(&self) -> usize {
        self.cfg.dims
    }

    /// `http:<model>@<dims>`.
    pub(crate) fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Embeds texts batch by batch; rows are unit length and in input order.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        // A zero batch size would make `chunks` panic; one text per request is the safe reading.
        for batch in texts.chunks(self.cfg.batch_size.max(1)) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    /// One batch with its own retry budget.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let attempts = self.cfg.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            match self.attempt(texts) {
                Ok(rows) => return Ok(rows),
                Err(Failure::Fatal(err)) => return Err(err),
                Err(Failure::Refused(last_error)) => {
                    return Err(EmbedError::Http {
                        url: self.cfg.url.clone(),
                        attempts: attempt,
                        last_error,
                    });
                }
                Err(Failure::Retry(last_error)) if attempt >= attempts => {
                    return Err(EmbedError::Http {
                        url: self.cfg.url.clone(),
                        attempts,
                        last_error,
                    });
                }
                Err(Failure::Retry(last_error)) => {
                    tracing::warn!(
                        url = %self.cfg.url, attempt, attempts, error = %last_error,
                        "embedding request failed; retrying"
                    );
                    (self.sleep)(self.backoff(attempt));
                    attempt += 1;
                }
            }
        }
    }

    /// The wait after failed attempt `attempt` (1-based): base × 2^(attempt−1), capped.
    fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(62) as i32;
        let wait = self.cfg.backoff_seconds * 2f64.powi(doublings);
        seconds(wait.min(self.cfg.backoff_max_seconds))
    }

    /// One request for one batch, classified.
    fn attempt(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
        let body = EmbeddingRequest { model: &self.cfg.model, input: texts };
        let mut request = self.agent.post(&self.cfg.url);
        if let Some(key) = &self.cfg.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let response = request.send_json(&body).map_err(|e| self.transport(e))?;
        let status = response.status().as_u16();
        let text = response
            .into_body()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(|e| self.transport(e));

        if !(200..300).contains(&status) {
            let snippet = text.as_deref().map(snippet).unwrap_or_default();
            let last_error = format!("HTTP {status}: {snippet}");
            return Err(if retryable_status(status) {
                Failure::Retry(last_error)
            } else {
                Failure::Refused(last_error)
            });
        }
        self.parse(texts.len(), &text?)
    }

    /// Turns a 2xx body into ordered, checked, normalised rows.
    fn parse(&self, expected: usize, text: &str) -> Result<Vec<Vec<f32>>, Failure> {
        let reply: Reply = serde_json::from_str(text).map_err(|e| {
            Failure::Retry(format!("unusable reply ({e}); the body starts: {}", snippet(text)))
        })?;
        let got = reply.data.len();
        if got != expected {
            return Err(Failure::Fatal(EmbedError::Count { expected, got }));
        }
        let mut rows: Vec<(usize, Vec<f32>)> = reply
            .data
            .into_iter()
            .enumerate()
            .map(|(pos, row)| (row.index.unwrap_or(pos), row.embedding))
            .collect();
        rows.sort_by_key(|(index, _)| *index);
        if rows.iter().enumerate().any(|(pos, (index, _))| pos != *index) {
            return Err(Failure::Fatal(EmbedError::Other(format!(
                "the embedding endpoint {} answered with indices that are not 0..{expected}, so \
                 vectors cannot be matched to texts",
                self.cfg.url
            ))));
        }
        let mut vectors = Vec::with_capacity(expected);
        for (_, mut v) in rows {
            if v.len() != self.cfg.dims {
                return Err(Failure::Fatal(EmbedError::Dimension {
                    expected: self.cfg.dims,
                    got: v.len(),
                }));
            }
            l2_normalise(&mut v);
            vectors.push(v);
        }
        Ok(vectors)
    }

    /// Classifies a failure below HTTP: the network may recover, a bad setting will not.
    fn transport(&self, err: ureq::Error) -> Failure {
        match err {
            ureq::Error::Timeout(_) => {
                Failure::Retry(format!("timed out (limit {} s): {err}", self.cfg.timeout_seconds))
            }
            ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_)
            | ureq::Error::ConnectProxyFailed(_) => {
                Failure::Retry(format!("connection error: {err}"))
            }
            other => Failure::Refused(format!("the request could not be made: {other}")),
        }
    }
}

/// Statuses that may pass on their own: server errors, timeouts, "too early", rate limits.
fn retryable_status(status: u16) -> bool {
    matches!(status, 500..=599 | 408 | 425 | 429)
}

/// The first characters of a body, for a message.
fn snippet(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        "(empty body)".to_string()
    } else {
        body.chars().take(BODY_SNIPPET).collect()
    }
}

/// A non-negative, finite number of seconds as a `Duration` (anything else is no wait).
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};

    const DIMS: usize = 4;

    /// What the scripted server does with one request.
    enum Script {
        /// Answers with this status and body.
        Raw(u16, String),
        /// Answers 200 with one row per input, `[len(text), 1, 0, …]` of this width, rows in
        /// reverse order so the client must sort by `index`.
        Embed(usize),
        /// Reads the request and never answers (the client times out).
        Silent,
    }

    /// One request as the server saw it.
    struct Seen {
        head: String,
        body: serde_json::Value,
    }

    /// A one-thread HTTP/1.1 server answering one scripted reply per connection, in order.
    fn serve(script: Vec<Script>) -> (String, Arc<Mutex<Vec<Seen>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/embeddings", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for step in script {
                let (mut stream, _) = listener.accept().unwrap();
                let request = read_request(&mut stream);
                let inputs: Vec<String> = request.body["input"]
                    .as_array()
                    .map(|a| a.iter().map(|t| t.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                log.lock().unwrap().push(request);
                match step {
                    Script::Raw(status, body) => respond(&mut stream, status, &body),
                    Script::Embed(dims) => respond(&mut stream, 200, &embed_reply(&inputs, dims)),
                    Script::Silent => held.push(stream),
                }
            }
        });
        (url, seen)
    }

    fn read_request(stream: &mut TcpStream) -> Seen {
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line);
        }
        let length = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().unwrap())
            })
            .expect("the client sent no Content-Length");
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        Seen { head, body: serde_json::from_slice(&body).unwrap() }
    }

    fn respond(stream: &mut TcpStream, status: u16, body: &str) {
        let reply = format!(
            "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(reply.as_bytes()).unwrap();
    }

    fn vector_for(text: &str, dims: usize) -> Vec<f32> {
        let mut v = vec![0.0; dims];
        v[0] = text.len() as f32;
        v[1] = 1.0;
        v
    }

    fn embed_reply(inputs: &[String], dims: usize) -> String {
        let rows: Vec<serde_json::Value> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": vector_for(t, dims)}))
            .collect();
        serde_json::json!({"object": "list", "data": rows}).to_string()
    }

    fn normalised(text: &str) -> Vec<f32> {
        let mut v = vector_for(text, DIMS);
        l2_normalise(&mut v);
        v
    }

    fn config(url: &str, max_attempts: u32) -> HttpConfig {
        HttpConfig {
            url: url.to_string(),
            model: "test-model".to_string(),
            dims: DIMS,
            batch_size: 64,
            max_attempts,
            backoff_seconds: 1.0,
            backoff_max_seconds: 30.0,
            timeout_seconds: 10.0,
            api_key: None,
        }
    }

    /// An embedder whose waits are recorded (in seconds) instead of slept.
    fn recording(cfg: HttpConfig) -> (HttpEmbedder, Arc<Mutex<Vec<f64>>>) {
        let waits = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&waits);
        let e =
            HttpEmbedder::new(cfg).with_sleep(move |d| log.lock().unwrap().push(d.as_secs_f64()));
        (e, waits)
    }

    fn waits(w: &Arc<Mutex<Vec<f64>>>) -> Vec<f64> {
        w.lock().unwrap().clone()
    }

    fn raw(status: u16, body: &str) -> Script {
        Script::Raw(status, body.to_string())
    }

    #[test]
    fn rows_follow_index_and_are_normalised() {
        let (url, seen) = serve(vec![Script::Embed(DIMS)]);
        let (e, w) = recording(config(&url, 5));
        let rows = e.embed(&["a", "bbb", "cc"]).unwrap();
        assert_eq!(rows, vec![normalised("a"), normalised("bbb"), normalised("cc")]);
        assert!(waits(&w).is_empty());
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            seen[0].body,
            serde_json::json!({"model": "test-model", "input": ["a", "bbb", "cc"]})
        );
        assert!(seen[0].head.starts_with("POST /v1/embeddings HTTP/1.1\r\n"), "{}", seen[0].head);
        assert!(!seen[0].head.to_ascii_lowercase().contains("authorization"));
    }

    #[test]
    fn api_key_is_sent_as_bearer() {
        let (url, seen) = serve(vec![Script::Embed(DIMS)]);
        let mut cfg = config(&url, 5);
        cfg.api_key = Some("s3cret".to_string());
        recording(cfg).0.embed(&["a"]).unwrap();
        let head = seen.lock().unwrap()[0].head.to_ascii_lowercase();
        assert!(head.contains("authorization: bearer s3cret\r\n"), "{head}");
    }

    #[test]
    fn two_503s_then_success_waits_one_then_two() {
        let (url, seen) = serve(vec![raw(503, "busy"), raw(503, "busy"), Script::Embed(DIMS)]);
        let (e, w) = recording(config(&url, 5));
        assert_eq!(e.embed(&["a"]).unwrap(), vec![normalised("a")]);
        assert_eq!(waits(&w), vec![1.0, 2.0]);
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn always_502_uses_every_attempt_with_capped_waits() {
        let (url, seen) = serve((0..7).map(|_| raw(502, "bad gateway")).collect());
        let mut cfg = config(&url, 7);
        cfg.backoff_max_seconds = 4.0;
        let (e, w) = recording(cfg);
        let err = e.embed(&["a"]).unwrap_err();
        assert_eq!(waits(&w), vec![1.0, 2.0, 4.0, 4.0, 4.0, 4.0]);
        assert_eq!(seen.lock().unwrap().len(), 7);
        assert!(matches!(err, EmbedError::Http { attempts: 7, .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("7 attempt(s)") && msg.contains("HTTP 502: bad gateway"), "{msg}");
        assert!(msg.contains(&url), "{msg}");
    }

    #[test]
    fn one_attempt_means_no_wait() {
        let (url, seen) = serve(vec![raw(503, "busy")]);
        let (e, w) = recording(config(&url, 1));
        let msg = e.embed(&["a"]).unwrap_err().to_string();
        assert!(waits(&w).is_empty());
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert!(msg.contains("1 attempt(s)") && msg.contains("HTTP 503"), "{msg}");
    }

    #[test]
    fn every_retryable_status_is_retried() {
        for status in [500, 502, 503, 504, 408, 425, 429] {
            let (url, seen) = serve(vec![raw(status, "later"), Script::Embed(DIMS)]);
            let (e, w) = recording(config(&url, 5));
            assert_eq!(e.embed(&["a"]).unwrap(), vec![normalised("a")], "status {status}");
            assert_eq!(waits(&w), vec![1.0], "status {status}");
            assert_eq!(seen.lock().unwrap().len(), 2, "status {status}");
        }
    }

    #[test]
    fn client_errors_fail_at_once_naming_status_and_body() {
        for status in [400, 401, 403, 404, 409, 413, 422] {
            let body = format!("{{\"error\":\"model test-model: refused with {status}\"}}");
            let (url, seen) = serve(vec![raw(status, &body)]);
            let (e, w) = recording(config(&url, 5));
            let err = e.embed(&["a"]).unwrap_err();
            assert!(matches!(err, EmbedError::Http { attempts: 1, .. }), "{err:?}");
            let msg = err.to_string();
            assert!(msg.contains(&format!("HTTP {status}: {body}")), "{msg}");
            assert!(waits(&w).is_empty(), "status {status}");
            assert_eq!(seen.lock().unwrap().len(), 1, "status {status}");
        }
    }

    #[test]
    fn a_refusal_after_a_retry_counts_both_attempts() {
        let (url, seen) = serve(vec![raw(503, "busy"), raw(404, "no such model")]);
        let (e, w) = recording(config(&url, 5));
        let err = e.embed(&["a"]).unwrap_err();
        assert!(matches!(err, EmbedError::Http { attempts: 2, .. }), "{err:?}");
        assert!(err.to_string().contains("HTTP 404: no such model"), "{err}");
        assert_eq!(waits(&w), vec![1.0]);
        assert_eq!(seen.lock().unwrap().len(), 2);
    }

    #[test]
    fn error_body_is_quoted_up_to_200_chars() {
        let body = "x".repeat(500);
        let (url, _seen) = serve(vec![raw(404, &body)]);
        let msg = recording(config(&url, 5)).0.embed(&["a"]).unwrap_err().to_string();
        assert!(msg.contains(&format!("HTTP 404: {}", "x".repeat(200))), "{msg}");
        assert!(!msg.contains(&"x".repeat(201)), "{msg}");
    }

    #[test]
    fn wrong_dims_is_fatal_and_not_retried() {
        let (url, seen) = serve(vec![Script::Embed(DIMS + 1), Script::Embed(DIMS)]);
        let (e, w) = recording(config(&url, 5));
        let err = e.embed(&["a", "b"]).unwrap_err();
        assert!(matches!(err, EmbedError::Dimension { expected: 4, got: 5 }), "{err:?}");
        assert!(waits(&w).is_empty());
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn short_batch_is_a_count_error() {
        let one = r#"{"data":[{"index":0,"embedding":[1,0,0,0]}]}"#;
        let (url, seen) = serve(vec![raw(200, one), Script::Embed(DIMS)]);
        let (e, w) = recording(config(&url, 5));
        let err = e.embed(&["a", "b", "c"]).unwrap_err();
        assert!(matches!(err, EmbedError::Count { expected: 3, got: 1 }), "{err:?}");
        assert!(err.to_string().contains("1 embeddings for 3 inputs"));
        assert!(waits(&w).is_empty());
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn missing_data_and_unparseable_bodies_are_retried() {
        let script = vec![
            raw(200, r#"{"object":"list"}"#),
            raw(200, "<html>oops</html>"),
            Script::Embed(DIMS),
        ];
        let (url, seen) = serve(script);
        let (e, w) = recording(config(&url, 5));
        assert_eq!(e.embed(&["a"]).unwrap(), vec![normalised("a")]);
        assert_eq!(waits(&w), vec![1.0, 2.0]);
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn missing_data_to_the_end_names_it() {
        let (url, _seen) = serve(vec![raw(200, "{}"), raw(200, "{}")]);
        let msg = recording(config(&url, 2)).0.embed(&["a"]).unwrap_err().to_string();
        assert!(msg.contains("2 attempt(s)") && msg.contains("missing field `data`"), "{msg}");
    }

    #[test]
    fn duplicate_indices_are_refused() {
        let dup =
            r#"{"data":[{"index":0,"embedding":[1,0,0,0]},{"index":0,"embedding":[0,1,0,0]}]}"#;
        let (url, _seen) = serve(vec![raw(200, dup)]);
        let err = recording(config(&url, 5)).0.embed(&["a", "b"]).unwrap_err();
        assert!(err.to_string().contains("not 0..2"), "{err}");
    }

    #[test]
    fn empty_input_sends_nothing() {
        let (url, seen) = serve(vec![]);
        let (e, w) = recording(config(&url, 5));
        assert!(e.embed(&[]).unwrap().is_empty());
        assert!(seen.lock().unwrap().is_empty());
        assert!(waits(&w).is_empty());
    }

    #[test]
    fn batches_of_64_keep_order() {
        let (url, seen) =
            serve(vec![Script::Embed(DIMS), Script::Embed(DIMS), Script::Embed(DIMS)]);
        let texts: Vec<String> = (0..130).map(|i| "t".repeat(i + 1)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let rows = recording(config(&url, 5)).0.embed(&refs).unwrap();
        let want: Vec<Vec<f32>> = refs.iter().map(|t| normalised(t)).collect();
        assert_eq!(rows, want);
        let sizes: Vec<usize> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.body["input"].as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, vec![64, 64, 2]);
    }

    #[test]
    fn refused_connections_are_retried() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/v1/embeddings");
        let (e, w) = recording(config(&url, 3));
        let msg = e.embed(&["a"]).unwrap_err().to_string();
        assert_eq!(waits(&w), vec![1.0, 2.0]);
        assert!(msg.contains("3 attempt(s)") && msg.contains("connection error"), "{msg}");
    }

    #[test]
    fn timeouts_are_retried() {
        let (url, seen) = serve(vec![Script::Silent, Script::Embed(DIMS)]);
        let mut cfg = config(&url, 5);
        cfg.timeout_seconds = 0.5;
        let (e, w) = recording(cfg);
        assert_eq!(e.embed(&["a"]).unwrap(), vec![normalised("a")]);
        assert_eq!(waits(&w), vec![1.0]);
        assert_eq!(seen.lock().unwrap().len(), 2);
    }

    #[test]
    fn model_id_names_model_and_dims() {
        let mut cfg = config("http://127.0.0.1:9/v1/embeddings", 5);
        cfg.model = "nomic-embed-text".to_string();
        cfg.dims = 768;
        let e = super::super::Embedder::Http(HttpEmbedder::new(cfg));
        assert_eq!(e.model_id(), "http:nomic-embed-text@768");
        assert_eq!(e.dims(), 768);
    }

    #[test]
    fn is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<HttpEmbedder>();
        shareable::<super::super::Embedder>();
    }
}
