//! The optional reranker: an OpenAI/llama.cpp-style `/v1/rerank` endpoint that scores
//! (query, passage) pairs with a cross-encoder.
//!
//! It is asked to score the head of the fused candidates; search decides what to do with the
//! scores (see `fusion::apply_rerank`) and falls back to the fused order when it fails.

use std::time::Duration;

use crate::config::RerankSettings;

/// A configured reranker endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Reranker {
    settings: RerankSettings,
    agent: ureq::Agent,
}

impl Reranker {
    /// A reranker for these settings, or `None` when no URL is configured.
    pub(crate) fn new(settings: &RerankSettings) -> Option<Reranker> {
        if settings.url.trim().is_empty() {
            return None;
        }
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(60)))
            .http_status_as_error(false)
            .build()
            .into();
        Some(Reranker { settings: settings.clone(), agent })
    }

    /// Candidates rescored by default.
    pub(crate) fn candidates(&self) -> usize {
        self.settings.candidates
    }

    /// Candidates rescored in thorough mode.
    pub(crate) fn thorough_candidates(&self) -> usize {
        self.settings.thorough_candidates
    }

    /// The RRF constant for fusing with the fused order (0 = reranker order only).
    pub(crate) fn fusion_k(&self) -> f64 {
        self.settings.fusion_k
    }

    /// Scores each document against the query; the result is aligned with `documents`.
    pub(crate) fn rerank(&self, query: &str, documents: &[&str]) -> Result<Vec<f32>, String> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let body =
            RerankRequest { model: &self.settings.model, query, documents, top_n: documents.len() };
        let mut resp = self
            .agent
            .post(&self.settings.url)
            .send_json(&body)
            .map_err(|e| format!("{}: {e}", self.settings.url))?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().map_err(|e| e.to_string())?;
        if status != 200 {
            return Err(format!("HTTP {status}: {}", text.chars().take(200).collect::<String>()));
        }
        parse_scores(&text, documents.len())
    }
}

/// The `/v1/rerank` request: the query, the passages, and a score for every one of them.
#[derive(serde::Serialize)]
struct RerankRequest<'a> {
    model: &'a str,
    query: &'a str,
    documents: &'a [&'a str],
    top_n: usize,
}

/// Reads `{"results": [{"index", "relevance_score" | "score"}]}` into scores by document index.
fn parse_scores(text: &str, n: usize) -> Result<Vec<f32>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("unreadable reply: {e}"))?;
    let results = v
        .get("results")
        .or_else(|| v.get("data"))
        .and_then(|r| r.as_array())
        .ok_or("the reply has no results list")?;
    let mut scores = vec![f32::NEG_INFINITY; n];
    for r in results {
        let index =
            r.get("index").and_then(|i| i.as_u64()).ok_or("a result has no index")? as usize;
        let score = r
            .get("relevance_score")
            .or_else(|| r.get("score"))
            .and_then(|s| s.as_f64())
            .ok_or("a result has no score")?;
        if index < n {
            scores[index] = score as f32;
        }
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_llama_cpp_and_openai_style_replies() {
        let s = parse_scores(
            r#"{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":-2.5}]}"#,
            3,
        )
        .unwrap();
        assert_eq!(s[..2], [-2.5, 0.9]);
        assert_eq!(s[2], f32::NEG_INFINITY, "a document the reranker skipped goes last");
        assert!(parse_scores(r#"{"data":[{"index":0,"score":1}]}"#, 1).is_ok());
        assert!(parse_scores("not json", 1).is_err());
        assert!(parse_scores(r#"{"results":[{"index":0}]}"#, 1).is_err());
    }

    #[test]
    fn no_url_means_no_reranker() {
        let s = RerankSettings {
            url: " ".into(),
            model: String::new(),
            candidates: 20,
            fusion_k: 5.0,
            thorough_candidates: 40,
        };
        assert!(Reranker::new(&s).is_none());
    }
}
