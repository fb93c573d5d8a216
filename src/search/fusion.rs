//! Fusing the two arms into one list, and folding in a reranker's order.
//!
//! Two fusions, chosen by `search.fusion` ([`Fusion`]):
//!
//! - **Weighted reciprocal-rank fusion** (`rrf`). A chunk's fused score is the sum over the
//!   arms that found it of `weight / (rrf_k + rank)`, divided by the best possible sum (rank 1
//!   in every active arm), so it lies in (0, 1]: with both arms weighted 1.0 a chunk first in
//!   both arms scores 1.0 and a chunk first in one arm only 0.5. Ranks alone count, so a
//!   near-tie and a landslide look the same.
//! - **A convex combination of normalised scores** (`convex-*`, after Bruch et al., "An
//!   Analysis of Fusion Functions for Hybrid Retrieval", 2023). Each arm's raw scores (BM25,
//!   cosine) are normalised over that arm's candidate list ([`Normalisation`]), and a chunk's
//!   fused score is the weighted mean of its two normalised scores, divided by the best
//!   possible mean, so it too lies in [0, 1]. A lexical candidate the dense arm did not list
//!   is given its exact cosine (the caller scores it); a dense candidate the lexical arm did
//!   not list is scored as the lexical list's last: an upper bound on its BM25, which may be
//!   0. Under min-max and z-score that comes to 0; under `convex-theoretical`, whose floor is
//!   0 and not the list's lowest, it is `lo / hi`, as for the last listed chunk. That is a
//!   choice measured in `docs/search.md` (before 2026-12-06 theoretical gave it 0, which sank
//!   dense-only answers below the weakest word match). Where the list is one match, or
//!   exact ties, every normalisation gives it 0: it is below each listed one. A lexical
//!   candidate that has no vector yet (a note written during a build, found by its words
//!   first) is scored as every chunk is before any vector exists: by its words alone, its
//!   lexical score over the lexical list's best.
//!
//! Either way each arm's share of the fused score is kept (`dense_part`, `lexical_part`) for
//! `explain`. Filed documents are then multiplied by the document weight, so the note written
//! from a document outranks the document itself when both answer as well.

use std::collections::HashMap;

pub(crate) use crate::config::{Fusion, Normalisation};

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
    /// Which fusion.
    pub(crate) fusion: Fusion,
    /// The RRF constant (60); unused by a convex combination.
    pub(crate) rrf_k: f64,
    /// The dense arm's weight (1.0).
    pub(crate) dense: f64,
    /// The lexical arm's weight (`search.lexical_weight`).
    pub(crate) lexical: f64,
}

/// One arm's candidates, best first, each with its raw score (BM25 or cosine).
pub(crate) type Ranked = [(i64, f32)];

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
    /// The dense arm's raw score (cosine), when it was scored.
    pub(crate) dense_score: Option<f32>,
    /// The lexical arm's raw score (BM25), when it listed the chunk.
    pub(crate) lexical_score: Option<f32>,
    /// The dense arm's share of `fused`.
    pub(crate) dense_part: f64,
    /// The lexical arm's share of `fused`.
    pub(crate) lexical_part: f64,
    /// Normalised fused score, before the document weight.
    pub fused: f64,
    /// The document weight, or 1.0.
    pub(crate) weight: f64,
    /// The ranking score; once the results are chosen, the shown score (see
    /// `select::follow_order`).
    pub(crate) score: f64,
    /// The ranking score before the shown order capped it (set with the shown score).
    pub(crate) relevance: f64,
}

impl Candidate {
    /// A candidate no arm has placed yet.
    pub(crate) fn new(id: i64) -> Candidate {
        Candidate {
            id,
            dense_rank: None,
            lexical_rank: None,
            rerank_rank: None,
            dense_score: None,
            lexical_score: None,
            dense_part: 0.0,
            lexical_part: 0.0,
            fused: 0.0,
            weight: 1.0,
            score: 0.0,
            relevance: 0.0,
        }
    }

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

/// Fuses the two arms' lists. `cosine` gives the exact dense score of a chunk the dense arm
/// did not list (a convex combination uses it; `None` when unknown). `weight_of` gives a
/// chunk's document weight, or `None` for an id that no longer exists (it is dropped). The
/// result is best first; ties go to the better single rank, then the lower id, so the order
/// is deterministic.
pub(crate) fn fuse(
    dense: &Ranked,
    lexical: &Ranked,
    w: &Weights,
    cosine: impl Fn(i64) -> Option<f32>,
    weight_of: impl Fn(i64) -> Option<f64>,
) -> Vec<Candidate> {
    if w.dense + w.lexical <= 0.0 {
        return Vec::new();
    }
    let mut by_id: HashMap<i64, Candidate> = HashMap::new();
    if w.dense > 0.0 {
        for (i, (id, score)) in dense.iter().enumerate() {
            let c = by_id.entry(*id).or_insert_with(|| Candidate::new(*id));
            if c.dense_rank.is_none() {
                c.dense_rank = Some(i + 1);
                c.dense_score = Some(*score);
            }
        }
    }
    if w.lexical > 0.0 {
        for (i, (id, score)) in lexical.iter().enumerate() {
            let c = by_id.entry(*id).or_insert_with(|| Candidate::new(*id));
            if c.lexical_rank.is_none() {
                c.lexical_rank = Some(i + 1);
                c.lexical_score = Some(*score);
            }
        }
    }
    let mut out: Vec<Candidate> = by_id
        .into_values()
        .filter_map(|mut c| {
            c.weight = weight_of(c.id)?;
            Some(c)
        })
        .collect();
    match w.fusion {
        Fusion::Rrf => rrf(&mut out, w),
        Fusion::Convex(norm) => {
            if w.dense > 0.0 {
                for c in out.iter_mut().filter(|c| c.dense_score.is_none()) {
                    c.dense_score = cosine(c.id);
                }
            }
            convex(&mut out, dense, lexical, w, norm);
        }
    }
    for c in &mut out {
        c.fused = c.dense_part + c.lexical_part;
        c.score = c.fused * c.weight;
    }
    sort(&mut out);
    out
}

/// Weighted RRF, each arm's share divided by the best possible sum.
fn rrf(out: &mut [Candidate], w: &Weights) {
    let best = (w.dense + w.lexical) / (w.rrf_k + 1.0);
    for c in out {
        c.dense_part = c.dense_rank.map_or(0.0, |r| w.dense / (w.rrf_k + r as f64)) / best;
        c.lexical_part = c.lexical_rank.map_or(0.0, |r| w.lexical / (w.rrf_k + r as f64)) / best;
    }
}

/// One arm's normalisation over its list: `(score - floor) / scale`, clamped at 0, so the
/// list's best is `top` and a chunk the arm did not score is 0.
#[derive(Debug, Clone, Copy)]
struct Scale {
    floor: f64,
    scale: f64,
    top: f64,
    /// The list's lowest raw score: what a chunk the arm did not list is scored as.
    lowest: f64,
}

impl Scale {
    /// The scale of one arm's list; `least` is the lowest score the arm can give at all.
    fn of(list: &Ranked, norm: Normalisation, least: f64) -> Option<Scale> {
        let scores: Vec<f64> = list.iter().map(|(_, s)| f64::from(*s)).collect();
        let (lo, hi) = scores
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| (lo.min(*s), hi.max(*s)));
        if scores.is_empty() {
            return None;
        }
        let (floor, scale) = match norm {
            Normalisation::MinMax => (lo, hi - lo),
            Normalisation::ZScore => {
                let n = scores.len() as f64;
                let mean = scores.iter().sum::<f64>() / n;
                let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
                (lo, var.sqrt())
            }
            Normalisation::Theoretical => (least.min(lo), hi - least.min(lo)),
        };
        // One candidate, or a list of exact ties: each is as good as the best. Judged on the
        // list's own spread, not the normalisation's scale, so that theoretical (whose scale
        // runs down to 0) decides it as the others do: otherwise an unlisted chunk, scored as
        // the list's last, would score as the one word match itself.
        if scale <= f64::EPSILON || hi - lo <= f64::EPSILON {
            // A chunk the arm did not list is below every listed one here: it stays at 0.
            return Some(Scale { floor: lo - 1.0, scale: 1.0, top: 1.0, lowest: lo - 1.0 });
        }
        Some(Scale { floor, scale, top: (hi - floor) / scale, lowest: lo })
    }

    /// A raw score normalised; a chunk the arm did not list is scored as its list's last.
    fn or_lowest(&self, score: Option<f32>) -> f64 {
        self.normalise(score.map_or(self.lowest, f64::from))
    }

    fn normalise(&self, raw: f64) -> f64 {
        ((raw - self.floor) / self.scale).max(0.0)
    }
}

/// The convex combination: each arm's normalised score times its weight, divided by the best
/// possible weighted sum (the top of each active arm's list).
fn convex(out: &mut [Candidate], dense: &Ranked, lexical: &Ranked, w: &Weights, n: Normalisation) {
    // BM25 is never below 0; a cosine never below -1.
    let d = Scale::of(dense, n, -1.0).filter(|_| w.dense > 0.0);
    let l = Scale::of(lexical, n, 0.0).filter(|_| w.lexical > 0.0);
    let best = d.map_or(0.0, |d| w.dense * d.top) + l.map_or(0.0, |l| w.lexical * l.top);
    if best <= 0.0 {
        return;
    }
    for c in out {
        // Unlisted by the lexical arm: scored as the last listed one (its BM25 is at most
        // that), which is 0 under min-max and z-score, whose floor is the lowest anyway.
        let lexical = l.map_or(0.0, |l| w.lexical * l.or_lowest(c.lexical_score));
        match (d, c.dense_score) {
            (Some(d), Some(cosine)) => {
                c.dense_part = w.dense * d.normalise(f64::from(cosine)) / best;
                c.lexical_part = lexical / best;
            }
            // A chunk whose vector is not written yet (a note written during a build, found by
            // its words first) is scored as every chunk is before any vector exists: by its
            // words alone. A dense part of 0 would read as a cosine of -1 under theoretical,
            // and any stand-in cosine would let a flat word list (one note's many sections)
            // sink it below dense-only neighbours that hold none of the words.
            (Some(_), None) => {
                let alone = l.map_or(0.0, |l| w.lexical * l.top);
                c.dense_part = 0.0;
                c.lexical_part = if alone > 0.0 { lexical / alone } else { 0.0 };
            }
            (None, _) => {
                c.dense_part = 0.0;
                c.lexical_part = lexical / best;
            }
        }
    }
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

    const W: Weights = Weights { fusion: Fusion::Rrf, rrf_k: 60.0, dense: 1.0, lexical: 0.5 };

    /// A ranked list with made-up falling scores.
    fn ranked(ids: &[i64]) -> Vec<(i64, f32)> {
        ids.iter().enumerate().map(|(i, id)| (*id, 1.0 - i as f32 * 0.01)).collect()
    }

    fn fuse_ids(dense: &[i64], lexical: &[i64], w: &Weights) -> Vec<Candidate> {
        fuse(&ranked(dense), &ranked(lexical), w, |_| None, |_| Some(1.0))
    }

    fn by_id(c: &[Candidate], id: i64) -> &Candidate {
        c.iter().find(|x| x.id == id).unwrap()
    }

    #[test]
    fn normalisation_gives_the_documented_scores() {
        let dense: Vec<i64> = (1..=50).collect();
        let c = fuse_ids(&dense, &[1, 100], &W);
        assert!((by_id(&c, 1).fused - 1.0).abs() < 1e-12);
        assert!((by_id(&c, 2).fused - (1.0 / 62.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((by_id(&c, 100).fused - (0.5 / 62.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((by_id(&c, 50).fused - 0.3697).abs() < 1e-4);
        let lexical_first = fuse_ids(&[], &[7], &W);
        assert!((lexical_first[0].fused - 1.0 / 3.0).abs() < 1e-12);
        let dense_first = fuse_ids(&[7], &[], &W);
        assert!((dense_first[0].fused - 2.0 / 3.0).abs() < 1e-12);
        assert!(c.iter().all(|x| x.fused > 0.0 && x.fused <= 1.0));
        assert!(c.windows(2).all(|p| p[0].score >= p[1].score));
        assert_eq!(by_id(&c, 1).matched(), Matched::Both);
        assert_eq!(by_id(&c, 2).matched(), Matched::Dense);
        assert_eq!(by_id(&c, 100).matched(), Matched::Lexical);
    }

    #[test]
    fn documents_are_down_weighted_and_unknown_ids_dropped() {
        let c = fuse(
            &ranked(&[1, 2]),
            &ranked(&[1, 2]),
            &W,
            |_| None,
            |id| match id {
                1 => Some(0.7),
                2 => Some(1.0),
                _ => None,
            },
        );
        assert_eq!(c[0].id, 2, "the note outranks the document written from it");
        assert!((c[1].score - 0.7).abs() < 1e-12);
        assert_eq!(fuse(&ranked(&[9]), &[], &W, |_| None, |_| None), vec![]);
    }

    #[test]
    fn a_single_arm_normalises_to_itself() {
        let w = Weights { dense: 0.0, ..W };
        let c = fuse_ids(&[1, 2], &[3], &w);
        assert_eq!(c.len(), 1);
        assert!((c[0].fused - 1.0).abs() < 1e-12);
    }

    #[test]
    fn reranking_reorders_only_the_head_and_keeps_it_ahead() {
        let mut c = fuse_ids(&[1, 2, 3, 4], &[], &W);
        apply_rerank(&mut c, &[0.1, 0.2, 0.9], 0.0);
        assert_eq!(c.iter().map(|x| x.id).collect::<Vec<_>>(), [3, 2, 1, 4]);
        assert_eq!(c[0].rerank_rank, Some(1));
        assert!(c[2].score > c[3].score);
        let mut c = fuse_ids(&[1, 2, 3], &[], &W);
        apply_rerank(&mut c, &[0.1, 0.9, 0.2], 5.0);
        // RRF of fused rank and reranker rank: 2 (2nd, 1st) beats 1 (1st, 3rd).
        assert_eq!(c[0].id, 2);
    }

    #[test]
    fn rrf_keeps_each_arms_share_of_the_fused_score() {
        let c = fuse_ids(&[1, 2], &[2, 1], &W);
        let one = by_id(&c, 1);
        assert!((one.dense_part - (1.0 / 61.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((one.lexical_part - (0.5 / 62.0) / (1.5 / 61.0)).abs() < 1e-12);
        assert!((one.fused - one.dense_part - one.lexical_part).abs() < 1e-12);
    }

    const CONVEX: Weights = Weights {
        fusion: Fusion::Convex(Normalisation::MinMax),
        rrf_k: 60.0,
        dense: 1.0,
        lexical: 1.0,
    };

    #[test]
    fn a_landslide_outweighs_a_near_tie_where_ranks_would_not() {
        // Dense: 1 and 2 nearly tie. Lexical: 2 wins by a landslide over 1.
        let dense = [(1, 0.80), (2, 0.79), (3, 0.30)];
        let lexical = [(2, 30.0), (1, 3.0), (4, 2.0)];
        let rrf = fuse(
            &dense,
            &lexical,
            &Weights { fusion: Fusion::Rrf, ..CONVEX },
            |_| None,
            |_| Some(1.0),
        );
        assert_eq!(rrf[0].id, 1, "ranks call it a tie, which the lower id takes");
        let c = fuse(&dense, &lexical, &CONVEX, |_| None, |_| Some(1.0));
        assert_eq!(c[0].id, 2, "the landslide decides: {c:?}");
        // Min-max: 2 is (0.49/0.5 + 1) / 2 of the best possible; 1 is (1 + 1/28) / 2.
        assert!((c[0].fused - (0.98 + 1.0) / 2.0).abs() < 1e-6);
        assert!((by_id(&c, 1).fused - (1.0 + 1.0 / 28.0) / 2.0).abs() < 1e-6);
        assert!(c.iter().all(|x| (0.0..=1.0).contains(&x.fused)));
        assert!(c.windows(2).all(|p| p[0].score >= p[1].score));
    }

    #[test]
    fn a_lexical_candidate_gets_its_exact_cosine_and_a_dense_one_the_lexical_floor() {
        let dense = [(1, 0.9), (2, 0.5)];
        let lexical = [(3, 10.0), (1, 5.0)];
        let c = fuse(&dense, &lexical, &CONVEX, |id| (id == 3).then_some(0.7), |_| Some(1.0));
        let three = by_id(&c, 3);
        assert_eq!(three.dense_score, Some(0.7));
        assert!((three.dense_part - 0.5 * 0.5).abs() < 1e-6, "{three:?}");
        assert_eq!(three.matched(), Matched::Lexical, "a filled-in score is no dense rank");
        let two = by_id(&c, 2);
        assert_eq!((two.lexical_score, two.lexical_part), (None, 0.0));
    }

    #[test]
    fn every_normalisation_bounds_the_fused_score_and_a_lone_arm_keeps_its_order() {
        let dense = [(1, 0.9), (2, 0.6), (3, 0.55), (4, 0.1)];
        let lexical = [(4, 12.0), (2, 11.0), (5, 1.0)];
        for (name, fusion) in Fusion::NAMES {
            assert_eq!(Fusion::parse(name), Some(fusion));
            assert_eq!(fusion.name(), name);
            let w = Weights { fusion, ..CONVEX };
            let c = fuse(&dense, &lexical, &w, |_| Some(0.0), |_| Some(1.0));
            assert!(c.iter().all(|x| (0.0..=1.0 + 1e-12).contains(&x.fused)), "{name}: {c:?}");
            let lone =
                fuse(&dense, &lexical, &Weights { lexical: 0.0, ..w }, |_| None, |_| Some(1.0));
            assert_eq!(lone.iter().map(|x| x.id).collect::<Vec<_>>(), [1, 2, 3, 4], "{name}");
            assert!((lone[0].fused - 1.0).abs() < 1e-12, "{name}: the best alone scores 1");
        }
        assert_eq!(Fusion::parse("borda"), None);
    }

    #[test]
    fn theoretical_normalisation_keeps_near_ties_near() {
        let w =
            Weights { fusion: Fusion::Convex(Normalisation::Theoretical), lexical: 0.0, ..CONVEX };
        let c = fuse(&[(1, 0.50), (2, 0.49)], &[], &w, |_| None, |_| Some(1.0));
        // (0.49 + 1) / (0.50 + 1), where min-max would put the second at 0.
        assert!((by_id(&c, 2).fused - 1.49 / 1.5).abs() < 1e-6);
    }

    #[test]
    fn a_chunk_without_a_vector_is_scored_by_its_words_as_before_any_vector_exists() {
        let dense = [(1, 0.86), (2, 0.85), (3, 0.84)];
        // 9 and 8 have no vector yet: one note's many sections, found by its words alone, in
        // a flat list, while the dense-only neighbours hold none of the words.
        let lexical = [(9, 1.02), (8, 1.01), (1, 1.0)];
        for (norm, lexical_weight) in [
            (Normalisation::Theoretical, 0.33),
            (Normalisation::MinMax, 1.0),
            (Normalisation::ZScore, 1.25),
        ] {
            let w = Weights { fusion: Fusion::Convex(norm), lexical: lexical_weight, ..CONVEX };
            let c = fuse(&dense, &lexical, &w, |_| None, |_| Some(1.0));
            let words_alone = fuse(&[], &lexical, &w, |_| None, |_| Some(1.0));
            for id in [9, 8] {
                let (x, alone) = (by_id(&c, id), by_id(&words_alone, id));
                assert_eq!((x.dense_score, x.dense_part), (None, 0.0), "{norm:?}");
                assert!((x.fused - alone.fused).abs() < 1e-12, "{norm:?}: {c:?}");
                assert!((x.fused - x.lexical_part).abs() < 1e-12, "{norm:?}");
            }
            assert_eq!(c[0].id, 9, "{norm:?}: the best word match leads: {c:?}");
            assert!(c.iter().all(|x| (0.0..=1.0 + 1e-12).contains(&x.fused)), "{norm:?}");
        }
    }

    #[test]
    fn a_chunk_the_lexical_arm_did_not_list_scores_as_its_last_listed_under_every_normalisation() {
        for norm in [Normalisation::Theoretical, Normalisation::MinMax, Normalisation::ZScore] {
            let w = Weights { fusion: Fusion::Convex(norm), ..CONVEX };
            let c = fuse(
                &[(1, 0.5), (2, 0.5)],
                &[(1, 10.0), (3, 4.0)],
                &w,
                |_| Some(0.0),
                |_| Some(1.0),
            );
            let (one, two, three) = (by_id(&c, 1), by_id(&c, 2), by_id(&c, 3));
            assert_eq!(two.lexical_score, None, "{norm:?}");
            assert!((two.lexical_part - three.lexical_part).abs() < 1e-12, "{norm:?}: {c:?}");
            assert!(three.lexical_part < one.lexical_part, "{norm:?}");
        }
        // One lexical candidate, or exact ties: an unlisted chunk gets none of its share under
        // every normalisation, while the listed ones get all of it.
        for norm in [Normalisation::Theoretical, Normalisation::MinMax, Normalisation::ZScore] {
            let w = Weights { fusion: Fusion::Convex(norm), ..CONVEX };
            for lexical in [&[(1, 10.0)][..], &[(1, 10.0), (3, 10.0)][..]] {
                let c = fuse(&[(2, 0.5)], lexical, &w, |_| Some(0.0), |_| Some(1.0));
                assert_eq!(by_id(&c, 2).lexical_part, 0.0, "{norm:?}: {c:?}");
                assert!(by_id(&c, 1).lexical_part > 0.0, "{norm:?}: {c:?}");
            }
        }
        // Theoretical: 4 / 10 of the lexical arm's share, not 0 as it was.
        let w = Weights { fusion: Fusion::Convex(Normalisation::Theoretical), ..CONVEX };
        let c = fuse(&[(2, 0.5)], &[(1, 10.0), (3, 4.0)], &w, |_| Some(0.0), |_| Some(1.0));
        assert!(by_id(&c, 2).lexical_part > 0.0, "{c:?}");
    }
}
