//! Weighted reciprocal-rank fusion of the two arms, and folding in a reranker's order.
//!
//! A chunk's fused score is the sum over the arms that found it of `weight / (rrf_k + rank)`,
//! divided by the best possible sum (rank 1 in every active arm), so it lies in (0, 1]: with the
//! defaults (both arms weighted 1.0) a chunk first in both arms scores 1.0 and a chunk first in
//! one arm only 0.5. Filed documents are then multiplied by the document weight, so the note
//! written from a document outranks the document itself when both answer as well.

/// Which arm found a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    /// Both arms.
    Both,
    /// The dense arm only.
    Dense,
    /// The lexical arm only.
    Lexical,
}

impl Matched {
    /// The wire name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Matched::Both => "both",
            Matched::Dense => "dense",
            Matched::Lexical => "lexical",
        }
    }
}

/// The fusion constants; an arm with weight 0 takes no part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Weights {
    /// The RRF constant (60).
    pub(crate) rrf_k: f64,
    /// The dense arm's weight (1.0).
    pub(crate) dense: f64,
    /// The lexical arm's weight (`search.lexical_weight`, 1.0 by default).
    pub(crate) lexical: f64,
}

/// A fused candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The chunk id.
    pub(crate) id: i64,
    /// 1-based rank in the dense list.
    pub(crate) dense_rank: Option<usize>,
    /// 1-based rank in the lexical list.
    pub(crate) lexical_rank: Option<usize>,
    /// 1-based rank given by the reranker.
    pub rerank_rank: Option<usize>,
    /// Normalised fused score, before the document weight.
    pub fused: f64,
    /// The document weight, or 1.0.
    pub(crate) weight: f64,
    /// The ranking score.
    pub(crate) score: f64,
}

impl Candidate {
    /// Which arm found it.
    pub(crate) fn matched(&self) -> Matched {
        match (self.dense_rank, self.lexical_rank) {
            (Some(_), Some(_)) => Matched::Both,
            (None, Some(_)) => Matched::Lexical,
            _ => Matched::Dense,
        }
    }

    fn best_rank(&self) -> usize {
        self.dense_rank.unwrap_or(usize::MAX).min(self.lexical_rank.unwrap_or(usize::MAX))
    }
}

/// Fuses two ranked id lists. `weight_of` gives a chunk's document weight, or `None` for an
/// id that no longer exists (it is dropped). The result is best first; ties go to the better
/// single rank, then the lower id, so the order is deterministic.
pub(crate) fn fuse(
    dense: &[i64],
    lexical: &[i64],
    w: &Weights,
    weight_of: impl Fn(i64) -> Option<f64>,
) -> Vec<Candidate> {
    let best = (w.dense + w.lexical) / (w.rrf_k + 1.0);
    if best <= 0.0 {
        return Vec::new();
    }
    let mut by_id: std::collections::HashMap<i64, Candidate> = std::collections::HashMap::new();
    let blank = |id: i64| Candidate {
        id,
        dense_rank: None,
        lexical_rank: None,
        rerank_rank: None,
        fused: 0.0,
        weight: 1.0,
        score: 0.0,
    };
    if w.dense > 0.0 {
        for (i, id) in dense.iter().enumerate() {
            by_id.entry(*id).or_insert_with(|| blank(*id)).dense_rank.get_or_insert(i + 1);
        }
    }
    if w.lexical > 0.0 {
        for (i, id) in lexical.iter().enumerate() {
            by_id.entry(*id).or_insert_with(|| blank(*id)).lexical_rank.get_or_insert(i + 1);
        }
    }
    let mut out: Vec<Candidate> = by_id
        .into_values()
        .filter_map(|mut c| {
            c.weight = weight_of(c.id)?;
            let sum = c.dense_rank.map_or(0.0, |r| w.dense / (w.rrf_k + r as f64))
                + c.lexical_rank.map_or(0.0, |r| w.lexical / (w.rrf_k + r as f64));
            c.fused = sum / best;
            c.score = c.fused * c.weight;
            Some(c)
        })
        .collect();
    sort(&mut out);
    out
}

fn sort(list: &mut [Candidate]) {
    list.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then(a.best_rank().cmp(&b.best_rank())).then(a.id.cmp(&b.id))
    });
}

/// Reorders the head of `cands` (as many as `scores` has entries, in the same order) by the
/// reranker. With `fusion_k` > 0 the reranker's rank and the fused rank are combined by RRF
/// with that constant; with 0 the reranker's order alone decides. The head always stays ahead
/// of the candidates that were not reranked.
pub(crate) fn apply_rerank(cands: &mut [Candidate], scores: &[f32], fusion_k: f64) {
    let n = scores.len().min(cands.len());
    if n == 0 {
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
    for (r, idx) in order.iter().enumerate() {
        cands[*idx].rerank_rank = Some(r + 1);
    }
    for (i, c) in cands.iter_mut().enumerate().take(n) {
        let rr = c.rerank_rank.unwrap_or(n) as f64;
        let s = if fusion_k > 0.0 {
            (1.0 / (fusion_k + (i + 1) as f64) + 1.0 / (fusion_k + rr)) / (2.0 / (fusion_k + 1.0))
        } else {
            1.0 - (rr - 1.0) / n as f64
        };
        // Map into (0.5, 1] so every reranked candidate stays ahead of the tail.
        c.score = 0.5 + 0.5 * s;
    }
    let tail_max = cands[n..].iter().map(|c| c.score).fold(0.0f64, f64::max);
    if tail_max > 0.0 {
        for c in &mut cands[n..] {
            c.score = 0.49 * c.score / tail_max;
        }
    }
    let (head, _) = cands.split_at_mut(n);
    head.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Weights = Weights { rrf_k: 60.0, dense: 1.0, lexical: 0.5 };

    fn by_id(c: &[Candidate], id: i64) -> &Candidate {
        c.iter().find(|x| x.id == id).unwrap()
    }

    #[test]
    fn normalisation_gives_the_documented_scores() {
        let dense: Vec<i64> = (1..=50).collect();
        let c = fuse(&dense, &[1, 100], &W, |_| Some(1.0));
        assert!((by_id(&c, 1).fused - 1.0).abs() < 1e-12);
        assert!((by_id(&c, 2).fused - (1.0 / 62.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((by_id(&c, 100).fused - (0.5 / 62.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((by_id(&c, 50).fused - 0.3697).abs() < 1e-4);
        let lexical_first = fuse(&[], &[7], &W, |_| Some(1.0));
        assert!((lexical_first[0].fused - 1.0 / 3.0).abs() < 1e-12);
        let dense_first = fuse(&[7], &[], &W, |_| Some(1.0));
        assert!((dense_first[0].fused - 2.0 / 3.0).abs() < 1e-12);
        assert!(c.iter().all(|x| x.fused > 0.0 && x.fused <= 1.0));
        assert!(c.windows(2).all(|p| p[0].score >= p[1].score));
        assert_eq!(by_id(&c, 1).matched(), Matched::Both);
        assert_eq!(by_id(&c, 2).matched(), Matched::Dense);
        assert_eq!(by_id(&c, 100).matched(), Matched::Lexical);
    }

    #[test]
    fn documents_are_down_weighted_and_unknown_ids_dropped() {
        let c = fuse(&[1, 2], &[1, 2], &W, |id| match id {
            1 => Some(0.7),
            2 => Some(1.0),
            _ => None,
        });
        assert_eq!(c[0].id, 2, "the note outranks the document written from it");
        assert!((c[1].score - 0.7).abs() < 1e-12);
        assert_eq!(fuse(&[9], &[], &W, |_| None), vec![]);
    }

    #[test]
    fn a_single_arm_normalises_to_itself() {
        let w = Weights { rrf_k: 60.0, dense: 0.0, lexical: 0.5 };
        let c = fuse(&[1, 2], &[3], &w, |_| Some(1.0));
        assert_eq!(c.len(), 1);
        assert!((c[0].fused - 1.0).abs() < 1e-12);
    }

    #[test]
    fn reranking_reorders_only_the_head_and_keeps_it_ahead() {
        let mut c = fuse(&[1, 2, 3, 4], &[], &W, |_| Some(1.0));
        apply_rerank(&mut c, &[0.1, 0.2, 0.9], 0.0);
        assert_eq!(c.iter().map(|x| x.id).collect::<Vec<_>>(), [3, 2, 1, 4]);
        assert_eq!(c[0].rerank_rank, Some(1));
        assert!(c[2].score > c[3].score);
        let mut c = fuse(&[1, 2, 3], &[], &W, |_| Some(1.0));
        apply_rerank(&mut c, &[0.1, 0.9, 0.2], 5.0);
        // RRF of fused rank and reranker rank: 2 (2nd, 1st) beats 1 (1st, 3rd).
        assert_eq!(c[0].id, 2);
    }
}
