//! What a write changed, as a short unified diff of lines.
//!
//! Every write answers with this, so a caller sees the lines it changed (and the timestamp
//! bump) without reading the note back. The diff is computed here, over lines, with the common
//! head and tail cut off first and a longest-common-subsequence table over what is left; a
//! change too large for the table is shown as one block removed and one added. It is for
//! people and models to read, not to apply: it is capped, and says so when it is. Pure text;
//! it knows nothing of files.

/// Unchanged lines shown around each change.
const CONTEXT: usize = 2;

/// The most diff lines a reply carries; an edit of a whole note would otherwise echo it.
const MAX_LINES: usize = 60;

/// The largest table (old lines times new lines) the line matcher builds: 4 million cells is a
/// few megabytes and a few milliseconds; beyond it the middle shows as removed then added.
const MAX_CELLS: usize = 4_000_000;

/// One line of the edit script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Removed(usize),
    Added(usize),
}

/// The unified diff from `old` to `new` (line endings and a BOM ignored), or an empty string
/// when their lines are the same.
pub(crate) fn unified(old: &str, new: &str) -> String {
    let a: Vec<&str> = lines(old);
    let b: Vec<&str> = lines(new);
    let ops = script(&a, &b);
    if ops.iter().all(|op| matches!(op, Op::Same(..))) {
        return String::new();
    }
    // Group the changes into hunks with CONTEXT lines around them.
    let changed: Vec<usize> = (0..ops.len()).filter(|&i| !matches!(ops[i], Op::Same(..))).collect();
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let start = i.saturating_sub(CONTEXT);
        let end = (i + CONTEXT + 1).min(ops.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (start, end) in hunks {
        let (mut old_at, mut new_at) = position(&ops, start);
        let (mut old_n, mut new_n) = (0, 0);
        let mut body = Vec::new();
        for op in &ops[start..end] {
            match *op {
                Op::Same(i, _) => {
                    body.push(format!(" {}", a[i]));
                    old_n += 1;
                    new_n += 1;
                }
                Op::Removed(i) => {
                    body.push(format!("-{}", a[i]));
                    old_n += 1;
                }
                Op::Added(j) => {
                    body.push(format!("+{}", b[j]));
                    new_n += 1;
                }
            }
        }
        // Unified diffs number from 1, and a hunk with no old (or new) lines names the line
        // before it.
        if old_n > 0 {
            old_at += 1;
        }
        if new_n > 0 {
            new_at += 1;
        }
        out.push(format!("@@ -{old_at},{old_n} +{new_at},{new_n} @@"));
        out.extend(body);
    }
    if out.len() > MAX_LINES {
        let more = out.len() - MAX_LINES;
        out.truncate(MAX_LINES);
        out.push(format!("… {more} more diff line(s) not shown; read the note to see them all"));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn lines(text: &str) -> Vec<&str> {
    text.trim_start_matches('\u{feff}').lines().collect()
}

/// The old and new line counts before `ops[at]`.
fn position(ops: &[Op], at: usize) -> (usize, usize) {
    ops[..at].iter().fold((0, 0), |(o, n), op| match op {
        Op::Same(..) => (o + 1, n + 1),
        Op::Removed(_) => (o + 1, n),
        Op::Added(_) => (o, n + 1),
    })
}

/// The edit script from `a` to `b`: the common head and tail, and between them the longest
/// common subsequence (or, past [`MAX_CELLS`], everything removed then added).
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail =
        a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops: Vec<Op> = (0..head).map(|i| Op::Same(i, i)).collect();
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        ops.extend((0..ma.len()).map(|i| Op::Removed(head + i)));
        ops.extend((0..mb.len()).map(|j| Op::Added(head + j)));
    } else {
        // lcs[i][j]: the longest common subsequence of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same(head + i, head + j));
                i += 1;
                j += 1;
            } else if j < mb.len() && (i == ma.len() || lcs[i * w + j + 1] > lcs[(i + 1) * w + j]) {
                ops.push(Op::Added(head + j));
                j += 1;
            } else {
                ops.push(Op::Removed(head + i));
                i += 1;
            }
        }
    }
    let (sa, sb) = (a.len() - tail, b.len() - tail);
    ops.extend((0..tail).map(|k| Op::Same(sa + k, sb + k)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_text_has_an_empty_diff() {
        assert_eq!(unified("a\nb\n", "a\r\nb"), "");
    }

    #[test]
    fn a_change_is_shown_with_two_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n";
        let new = "1\n2\n3\nfour\n5\n6\n7\n";
        assert_eq!(unified(old, new), "@@ -2,5 +2,5 @@\n 2\n 3\n-4\n+four\n 5\n 6\n");
    }

    #[test]
    fn an_added_line_at_the_end_and_distant_changes_make_separate_hunks() {
        assert_eq!(unified("a\nb\n", "a\nb\nc\n"), "@@ -1,2 +1,3 @@\n a\n b\n+c\n");
        let old = "t: 1\nx\nx\nx\nx\nx\nx\nlast\n";
        let new = "t: 2\nx\nx\nx\nx\nx\nx\nlast\nmore\n";
        assert_eq!(
            unified(old, new),
            "@@ -1,3 +1,3 @@\n-t: 1\n+t: 2\n x\n x\n@@ -7,2 +7,3 @@\n x\n last\n+more\n"
        );
        assert_eq!(unified("", "a\n"), "@@ -0,0 +1,1 @@\n+a\n");
    }

    #[test]
    fn a_long_diff_is_capped_and_says_so() {
        let new: String = (0..100).map(|i| format!("{i}\n")).collect();
        let out = unified("", &new);
        assert_eq!(out.lines().count(), MAX_LINES + 1);
        assert!(out.ends_with("… 41 more diff line(s) not shown; read the note to see them all\n"));
    }
}
