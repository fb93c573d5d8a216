//! A deterministic hashing embedder: no model, no network, the same vector in every process.
//!
//! Each lowercase `[a-z0-9]+` token adds `1 + ln(count)` to one bucket and subtracts it from
//! another, both chosen by the token's sha256; the row is then L2-normalised. Texts that share
//! words point the same way, so it behaves like a crude lexical embedder. It exists for the
//! benchmark's synthetic scale points (where embedding 100k real chunks would take hours) and
//! for tests and relevance runs that must not depend on model weights. It is never the default.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// The hashing embedder.
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dims: usize,
    id: String,
}

impl HashingEmbedder {
    /// An embedder producing vectors of `dims` floats.
    pub(crate) fn new(dims: usize) -> HashingEmbedder {
        let dims = dims.max(2);
        HashingEmbedder { dims, id: format!("hashing@{dims}") }
    }

    /// The vector length.
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// The model identity.
    pub(crate) fn model_id(&self) -> &str {
        &self.id
    }

    /// One L2-normalised row per text.
    pub(crate) fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let body = lower
            .strip_prefix("search_document:")
            .or_else(|| lower.strip_prefix("search_query:"))
            .unwrap_or(&lower);
        let mut counts: HashMap<&str, u32> = HashMap::new();
        for token in body.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit())) {
            if !token.is_empty() {
                *counts.entry(token).or_default() += 1;
            }
        }
        let mut row = vec![0.0f32; self.dims];
        for (token, n) in counts {
            let w = 1.0 + (n as f32).ln();
            let h = Sha256::digest(token.as_bytes());
            let a = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize % self.dims;
            let b = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize % self.dims;
            row[a] += w;
            row[b] -= w;
        }
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        row.iter_mut().for_each(|x| *x /= norm);
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_normalised_and_word_sensitive() {
        let e = HashingEmbedder::new(64);
        let rows = e.embed(&[
            "boiler pressure bar",
            "search_query: boiler pressure bar",
            "ferry to the island",
        ]);
        assert_eq!(rows[0], rows[1], "the task prefix is ignored");
        let norm: f32 = rows[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let near = e.embed(&["the boiler pressure"])[0].clone();
        assert!(dot(&rows[0], &near) > dot(&rows[2], &near));
        assert_eq!(e.model_id(), "hashing@64");
        assert_eq!(e.embed(&[""])[0].len(), 64);
    }
}
