//! Sentence embeddings: text in, unit-length vectors out.
//!
//! Three backends sit behind one [`Embedder`]: a BERT model run in-process from a local folder
//! ([`local`], the default, with its forward pass in `bert`), an OpenAI-compatible `/v1/embeddings` endpoint ([`http`]), and a
//! model-free hashing embedder for benchmarks and tests ([`hashing`]). Each reports a
//! stable [`Embedder::model_id`] so that the index store never mixes vectors of two models.
//!
//! This module never fetches a model: a missing folder is an error that says how to install it.
//! It knows nothing of chunks, caching or the index; callers pass plain strings.

mod amx;
mod bert;
pub(crate) mod hashing;
pub(crate) mod http;
pub(crate) mod install;
pub mod local;
mod lowp;

#[cfg(target_arch = "x86_64")]
pub(crate) use amx::rate::TileRate;

use std::path::PathBuf;

/// Why embedding (or loading an embedder) failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model folder lacks a file, or a file in it cannot be used.
    #[error(
        "the embedding model in {} cannot be loaded: {reason}; install it with \
         `scripts/fetch-model.sh DATA_DIR`, or point embedding.model_dir at another model folder",
        dir.display()
    )]
    ModelFiles {
        /// The model folder that was tried.
        dir: PathBuf,
        /// Which file is missing or unusable, and why.
        reason: String,
    },
    /// The embedding endpoint failed for good (after retries where retrying made sense).
    #[error(
        "the embedding endpoint {url} failed after {attempts} attempt(s): {last_error}; check \
         that the embedding server is running and that embedding.url and embedding.model are \
         right"
    )]
    Http {
        /// The endpoint that was called.
        url: String,
        /// How many requests were made for the failing batch.
        attempts: u32,
        /// The last failure, e.g. `HTTP 502: <body>` or a transport error.
        last_error: String,
    },
    /// The model answers with vectors of another width than configured.
    #[error(
        "the embedding model returned {got}-dimensional vectors but {expected} were configured; \
         set embedding.dims to {got} or choose the model you meant"
    )]
    Dimension {
        /// The configured width.
        expected: usize,
        /// The width the model produced.
        got: usize,
    },
    /// The endpoint answered with a different number of vectors than texts sent.
    #[error(
        "the embedding endpoint returned {got} embeddings for {expected} inputs; the server is \
         not answering one vector per input, check its batch limits"
    )]
    Count {
        /// How many texts were sent.
        expected: usize,
        /// How many vectors came back.
        got: usize,
    },
    /// Any other failure while embedding (tokeniser or tensor errors).
    #[error("embedding failed: {0}")]
    Other(String),
}

impl From<EmbedError> for crate::Error {
    fn from(err: EmbedError) -> crate::Error {
        // Every embedding failure is on the server's side of the line: the caller's request was
        // fine, the model or its endpoint was not.
        crate::Error::new(crate::ErrorCode::InternalError, err.to_string())
    }
}

/// One embedding backend, chosen by configuration.
pub enum Embedder {
    /// The in-process BERT model loaded from a folder.
    Local(local::LocalEmbedder),
    /// An OpenAI-compatible embeddings endpoint.
    Http(http::HttpEmbedder),
    /// The deterministic hashing embedder (no model).
    Hashing(hashing::HashingEmbedder),
}

impl Embedder {
    /// The width of every vector this embedder returns.
    pub(crate) fn dims(&self) -> usize {
        match self {
            Embedder::Local(e) => e.dims(),
            Embedder::Http(e) => e.dims(),
            Embedder::Hashing(e) => e.dims(),
        }
    }

    /// Stable identity of the model for the index store: a vector made by another identity is never reused.
    ///
    /// Local: `local:<folder name>@<first 12 hex of sha256(model.safetensors)>`.
    /// Http: `http:<model>@<dims>`.
    pub(crate) fn model_id(&self) -> &str {
        match self {
            Embedder::Local(e) => e.model_id(),
            Embedder::Http(e) => e.model_id(),
            Embedder::Hashing(e) => e.model_id(),
        }
    }

    /// The local model's arithmetic (`amx`, `int8`, `bf16` or `f32`, as `auto` or
    /// `MDVAULT_ENCODER` chose it at load); `None` for the other backends. Rankings move a
    /// little with it, so `eval` records it beside the model.
    pub(crate) fn encoder(&self) -> Option<&'static str> {
        match self {
            Embedder::Local(e) => Some(e.precision()),
            Embedder::Http(_) | Embedder::Hashing(_) => None,
        }
    }

    /// Embed texts; rows are L2-normalised and in input order. Empty input => empty output.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self {
            Embedder::Local(e) => e.embed(texts),
            Embedder::Http(e) => e.embed(texts),
            Embedder::Hashing(e) => Ok(e.embed(texts)),
        }
    }

    /// Embeds one search's query: for the local model on a thread of its own, so a search
    /// never waits behind a batch of documents (see [`local::LocalEmbedder::embed_queries`]).
    pub(crate) fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut rows = match self {
            Embedder::Local(e) => e.embed_queries(&[text])?,
            Embedder::Http(e) => e.embed(&[text])?,
            Embedder::Hashing(e) => e.embed(&[text]),
        };
        rows.pop().ok_or_else(|| EmbedError::Other("the embedder returned no vector".into()))
    }
}

/// Scales `v` to unit length; a zero vector stays zero instead of becoming NaN.
pub(crate) fn l2_normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in v.iter_mut() {
        *x /= norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_scales_to_unit_length() {
        let mut v = vec![3.0, 4.0];
        l2_normalise(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
    }

    #[test]
    fn normalise_leaves_a_zero_vector_finite() {
        let mut v = vec![0.0, 0.0, 0.0];
        l2_normalise(&mut v);
        assert_eq!(v, vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn messages_name_the_thing_and_the_fix() {
        let e =
            EmbedError::ModelFiles { dir: PathBuf::from("/m/x"), reason: "no config.json".into() };
        let msg = e.to_string();
        assert!(msg.contains("/m/x") && msg.contains("scripts/fetch-model.sh"), "{msg}");
        let e = EmbedError::Count { expected: 3, got: 1 };
        assert!(e.to_string().contains("1 embeddings for 3 inputs"));
        let e = EmbedError::Http {
            url: "http://h/v1/embeddings".into(),
            attempts: 7,
            last_error: "HTTP 502: bad gateway".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("7 attempt(s)") && msg.contains("HTTP 502"), "{msg}");
        let err: crate::Error = EmbedError::Dimension { expected: 768, got: 384 }.into();
        assert_eq!(err.code(), crate::ErrorCode::InternalError);
        assert!(err.message().contains("384-dimensional"));
    }
}
