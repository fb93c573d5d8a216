//! The items a long answer pages through, for each answer that can grow with the vault: a
//! listing's entries, a map's headings, the findings of a maintenance run, and so on.
//!
//! An answer's items are the entries of its lists in the order its prose shows them (for an
//! answer with several lists, one after another), so `offset` counts the same things in the
//! prose and in the structured content. Keeping a range of items keeps every other field
//! whole: a maintenance check keeps its status and its counts of all its findings, and only
//! the findings listed are cut. What a budgeted answer does with them is `budget.rs`'s.

use std::ops::Range;

/// An answer whose lists can be cut to a range of their items.
pub(crate) trait Rows: Clone {
    /// How many items its lists hold in all.
    fn rows(&self) -> usize;
    /// Keeps the items in `keep` (indexed across its lists, in order) and drops the rest.
    fn keep(&mut self, keep: &Range<usize>);
}

/// Walks an answer's lists in order, cutting each to the part of the range it holds.
struct Span<'r> {
    keep: &'r Range<usize>,
    /// The index, across the lists, of the next list's first item.
    at: usize,
}

impl<'r> Span<'r> {
    fn new(keep: &'r Range<usize>) -> Span<'r> {
        Span { keep, at: 0 }
    }

    fn cut<T>(&mut self, list: &mut Vec<T>) {
        let start = self.at;
        self.at += list.len();
        let end = self.keep.end.saturating_sub(start).min(list.len());
        let from = self.keep.start.saturating_sub(start).min(end);
        list.truncate(end);
        list.drain(..from);
    }
}

impl Rows for Vec<String> {
    fn rows(&self) -> usize {
        self.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(self);
    }
}

impl Rows for crate::vault::Listing {
    fn rows(&self) -> usize {
        self.entries.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(&mut self.entries);
    }
}

impl Rows for crate::vault::NoteMap {
    fn rows(&self) -> usize {
        self.headings.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(&mut self.headings);
    }
}

impl Rows for crate::index::coverage::Report {
    fn rows(&self) -> usize {
        self.vaults.iter().map(|v| v.problems.len() + v.skipped.len() + v.stale.len()).sum()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        let mut span = Span::new(keep);
        for v in &mut self.vaults {
            span.cut(&mut v.problems);
            span.cut(&mut v.skipped);
            span.cut(&mut v.stale);
        }
    }
}

impl Rows for crate::upkeep::expiries::Report {
    fn rows(&self) -> usize {
        let untracked = self.untracked.as_ref().map_or(0, Vec::len);
        self.entries.len() + self.dismissed.len() + self.malformed.len() + untracked
    }
    fn keep(&mut self, keep: &Range<usize>) {
        let mut span = Span::new(keep);
        span.cut(&mut self.entries);
        span.cut(&mut self.dismissed);
        span.cut(&mut self.malformed);
        if let Some(list) = &mut self.untracked {
            span.cut(list);
        }
    }
}

impl Rows for crate::upkeep::callouts::Report {
    fn rows(&self) -> usize {
        self.callouts.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(&mut self.callouts);
    }
}

impl Rows for crate::vault::tags::TagReport {
    fn rows(&self) -> usize {
        self.tags.len() + self.notes.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        let mut span = Span::new(keep);
        span.cut(&mut self.tags);
        span.cut(&mut self.notes);
    }
}

impl Rows for crate::upkeep::findings::Run {
    fn rows(&self) -> usize {
        self.checks.iter().map(|c| c.findings.len()).sum()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        let mut span = Span::new(keep);
        for check in &mut self.checks {
            span.cut(&mut check.findings);
        }
    }
}

impl Rows for Vec<crate::upkeep::CheckInfo> {
    fn rows(&self) -> usize {
        self.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(self);
    }
}

impl Rows for crate::upkeep::survey::LinkReport {
    fn rows(&self) -> usize {
        self.outgoing.len() + self.backlinks.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        let mut span = Span::new(keep);
        span.cut(&mut self.outgoing);
        span.cut(&mut self.backlinks);
    }
}

impl Rows for crate::upkeep::survey::GrepReport {
    fn rows(&self) -> usize {
        self.hits.len()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        Span::new(keep).cut(&mut self.hits);
    }
}

/// An answer carried with what names it (its vault, the callout types counted open): the
/// items are the answer's.
impl<A: Clone, R: Rows> Rows for (A, R) {
    fn rows(&self) -> usize {
        self.1.rows()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        self.1.keep(keep);
    }
}

impl<A: Clone, B: Clone, R: Rows> Rows for (A, B, R) {
    fn rows(&self) -> usize {
        self.2.rows()
    }
    fn keep(&mut self, keep: &Range<usize>) {
        self.2.keep(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn a_range_across_two_lists_keeps_the_end_of_one_and_the_start_of_the_other() {
        let (mut first, mut second) = (names(3), names(4));
        let keep = 2..5;
        let mut span = Span::new(&keep);
        span.cut(&mut first);
        span.cut(&mut second);
        assert_eq!(first, ["n2"]);
        assert_eq!(second, ["n0", "n1"]);
    }

    #[test]
    fn a_range_past_the_end_keeps_nothing_and_a_whole_range_keeps_all() {
        let mut list = names(5);
        list.keep(&(7..9));
        assert!(list.is_empty());
        let mut list = names(5);
        list.keep(&(0..5));
        assert_eq!(list, names(5));
    }
}
