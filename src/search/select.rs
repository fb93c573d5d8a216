//! Choosing the k results: identifier pins first, then a diversity pass under a per-note cap.
//!
//! The identifier lookup exists because a query such as `NB-7726041` names one thing, and fusion
//! can bury the chunk that holds it under chunks that are merely similar. When the rarest query
//! token occurs in at most [`LOOKUP_MAX_MATCHES`] chunks, the lexical candidates that contain
//! every query token are pinned ahead of everything (one per note, at most
//! [`LOOKUP_MAX_PINS`] notes). The rest are picked greedily by maximal marginal relevance with
//! a binary same-note penalty, no note taking more than [`cap`] places; when that leaves
//! fewer than k, the remaining candidates fill up in score order regardless of the cap.

use std::collections::{HashMap, HashSet};

use super::fusion::Candidate;

/// The lookup fires only if the rarest query token is this rare or rarer.
pub(crate) const LOOKUP_MAX_MATCHES: u64 = 5;
/// At most this many notes are pinned.
pub(crate) const LOOKUP_MAX_PINS: usize = 5;

/// The per-note cap for k results: `max_per_note` when the configuration sets one, else one
/// for up to three results, two for a page of up to ten and a fifth of a longer one. Why two: a first page should cover
/// more notes than one note's passages; a third of k let one note take 7 of 20 places and
/// fill 3 of the top 5.
pub(crate) fn cap(k: usize, max_per_note: Option<usize>) -> usize {
    match max_per_note {
        Some(n) => n.max(1),
        None if k <= 3 => 1,
        None if k <= 10 => 2,
        None => k.div_ceil(5),
    }
}

/// Makes the shown scores follow the shown order: each result's `score` is capped at the one
/// above it, its ranking score kept as `relevance`. The diversity pass may place a note's
/// second passage (0.953) below another note's first (0.927), and a number that rises down the
/// list reads as a mistake. Pinned results stand apart: they lead because they hold every rare
/// query word, whatever they score, and say so, so the cap starts below them.
pub(crate) fn follow_order(chosen: &mut [(Candidate, bool)]) {
    let mut above = f64::INFINITY;
    for (c, pinned) in chosen.iter_mut() {
        c.relevance = c.score;
        if !*pinned {
            c.score = c.score.min(above);
            above = c.score;
        }
    }
}

/// Walks the lexical list in BM25 order and keeps the chunks that hold every query token, one
/// per note, up to [`LOOKUP_MAX_PINS`] notes. `info` gives a chunk's note and whether it holds
/// every token (`None` for an unknown chunk).
pub(crate) fn lookup_pins(
    lexical: &[i64],
    info: impl Fn(i64) -> Option<(String, bool)>,
) -> Vec<i64> {
    let mut notes = HashSet::new();
    let mut pins = Vec::new();
    for id in lexical {
        if notes.len() >= LOOKUP_MAX_PINS {
            break;
        }
        if let Some((note, true)) = info(*id)
            && notes.insert(note)
        {
            pins.push(*id);
        }
    }
    pins
}

/// Picks up to `k` candidates: pins first, then MMR under `cap`, then backfill. Returns each
/// with whether it was pinned. `note_of` names a chunk's note.
pub(crate) fn select(
    cands: &[Candidate],
    pins: &[i64],
    k: usize,
    cap: usize,
    lambda: f64,
    note_of: impl Fn(i64) -> String,
) -> Vec<(Candidate, bool)> {
    let mut chosen: Vec<(Candidate, bool)> = Vec::new();
    let mut used: HashSet<i64> = HashSet::new();
    let mut per_note: HashMap<String, usize> = HashMap::new();
    let position: HashMap<i64, usize> = cands.iter().enumerate().map(|(i, c)| (c.id, i)).collect();

    for pin in pins {
        if chosen.len() >= k {
            break;
        }
        let Some(&i) = position.get(pin) else { continue };
        if !used.insert(*pin) {
            continue;
        }
        *per_note.entry(note_of(*pin)).or_default() += 1;
        chosen.push((cands[i].clone(), true));
    }

    while chosen.len() < k {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in cands.iter().enumerate() {
            if used.contains(&c.id) {
                continue;
            }
            let seen = per_note.get(&note_of(c.id)).copied().unwrap_or(0);
            if seen >= cap {
                continue;
            }
            let penalty = if seen > 0 { 1.0 } else { 0.0 };
            let value = lambda * c.score - (1.0 - lambda) * penalty;
            if best.is_none_or(|(_, v)| value > v) {
                best = Some((i, value));
            }
        }
        let Some((i, _)) = best else { break };
        used.insert(cands[i].id);
        *per_note.entry(note_of(cands[i].id)).or_default() += 1;
        chosen.push((cands[i].clone(), false));
    }

    for c in cands {
        if chosen.len() >= k {
            break;
        }
        if used.insert(c.id) {
            chosen.push((c.clone(), false));
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(id: i64, score: f64) -> Candidate {
        Candidate { dense_rank: Some(1), fused: score, score, ..Candidate::new(id) }
    }

    /// Chunks 1..=6 belong to note "a"; others are their own notes.
    fn note(id: i64) -> String {
        if (1..=6).contains(&id) { "a".into() } else { format!("n{id}") }
    }

    #[test]
    fn shown_scores_never_rise_down_the_list_and_keep_the_ranking_score() {
        let mut chosen =
            vec![(cand(9, 0.2), true), (cand(7, 0.927), false), (cand(2, 0.953), false)];
        follow_order(&mut chosen);
        let shown: Vec<f64> = chosen.iter().map(|(c, _)| c.score).collect();
        assert_eq!(shown, [0.2, 0.927, 0.927], "a pin keeps its own score and caps nothing");
        assert_eq!(chosen[2].0.relevance, 0.953);
    }

    #[test]
    fn caps_follow_k() {
        let cap = |k| cap(k, None);
        assert_eq!((cap(5), cap(3), cap(20), cap(6), cap(1), cap(10)), (2, 1, 4, 2, 1, 2));
        assert_eq!(super::cap(20, Some(7)), 7);
    }

    #[test]
    fn a_dominant_note_takes_at_most_the_cap() {
        let mut cands: Vec<Candidate> = (1..=6).map(|i| cand(i, 1.0 - i as f64 * 0.01)).collect();
        cands.extend((7..=12).map(|i| cand(i, 0.5 - i as f64 * 0.01)));
        let got = select(&cands, &[], 5, cap(5, None), 0.9, note);
        let from_a = got.iter().filter(|(c, _)| note(c.id) == "a").count();
        let notes: HashSet<String> = got.iter().map(|(c, _)| note(c.id)).collect();
        assert_eq!((got.len(), from_a, notes.len()), (5, 2, 4));
    }

    #[test]
    fn a_competitive_field_takes_one_from_the_dominant_note() {
        let mut cands: Vec<Candidate> = (1..=6).map(|i| cand(i, 0.9 - i as f64 * 0.001)).collect();
        cands.extend((7..=12).map(|i| cand(i, 0.88 - i as f64 * 0.001)));
        cands.sort_by(|a, b| b.score.total_cmp(&a.score));
        let got = select(&cands, &[], 5, cap(5, None), 0.9, note);
        assert_eq!(got.iter().filter(|(c, _)| note(c.id) == "a").count(), 1);
    }

    #[test]
    fn backfill_ignores_the_cap_when_candidates_run_short() {
        let cands: Vec<Candidate> = (1..=6).map(|i| cand(i, 1.0 - i as f64 * 0.01)).collect();
        let got = select(&cands, &[], 5, cap(5, None), 0.9, note);
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn pins_come_first_count_against_the_cap_and_unknown_pins_are_ignored() {
        let cands: Vec<Candidate> = (1..=12).map(|i| cand(i, 1.0 - i as f64 * 0.01)).collect();
        let got = select(&cands, &[11, 99, 3], 5, cap(5, None), 0.9, note);
        assert_eq!(got[0].0.id, 11);
        assert!(got[0].1 && got[1].1);
        assert_eq!(got[1].0.id, 3);
        assert!(got.iter().filter(|(c, _)| note(c.id) == "a").count() <= 2);
        // With k 3 the cap is 1: the pinned chunk uses up its note's place.
        let got = select(&cands, &[3], 3, cap(3, None), 0.9, note);
        assert_eq!(got.iter().map(|(c, _)| c.id).collect::<Vec<_>>(), [3, 7, 8]);
        let many: Vec<i64> = (7..=12).collect();
        let got = select(&cands, &many, 3, cap(3, None), 0.9, note);
        assert_eq!(got.iter().map(|(c, _)| c.id).collect::<Vec<_>>(), [7, 8, 9]);
        assert!(got.iter().all(|(_, p)| *p));
    }

    #[test]
    fn lookup_pins_one_chunk_per_note_in_bm25_order() {
        let holds = |id: i64| Some((note(id), id != 2));
        assert_eq!(lookup_pins(&[2, 1, 3, 7, 8], holds), vec![1, 7, 8]);
        let all: Vec<i64> = (7..=20).collect();
        assert_eq!(lookup_pins(&all, |id| Some((note(id), true))).len(), LOOKUP_MAX_PINS);
        assert!(lookup_pins(&[1, 2], |_| None).is_empty());
    }
}
