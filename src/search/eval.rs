//! Relevance evaluation: query sets with judgments, and the scores a ranked list earns.
//!
//! Three query-set formats are read:
//! - the first predecessor's JSON: `{"queries": [{"q", "arm", "expect": [paths], "never":
//!   [paths], "why"}]}` (a bare list too); a hit is an expected path, exactly. mdvault's own
//!   sets may grade instead (`"expect": {path: gain}`) and name a `"split"` (`train`, `test`),
//!   so tuning can be done on one half and reported on the other;
//! - the second predecessor's JSONL: one `{"query", "gold": [path substrings]}` per line; a hit is
//!   a path containing one of the substrings;
//! - a BEIR folder (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`): judged documents become
//!   the notes `<shard>/<id>.md` of a vault the caller writes with [`write_beir_vault`].
//!
//! Scores are per note, not per passage: a ranked list of result paths is reduced to the first
//! occurrence of each path, and hit@n, MRR@10, nDCG@10 (graded when the judgments are) and
//! recall are taken over that. The per-note crowding and `never` leaks are read from the raw
//! list. Baselines are mdvault's own ([`Baseline`]) or, read-only, the first predecessor's
//! ([`ForeignBaseline`]). This module runs no search and knows no surface; the `eval` command
//! drives it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

/// Which arm a predecessor query was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arm {
    /// An exact token only the lexical arm is sure to find.
    Lexical,
    /// A paraphrase only the dense arm can answer.
    Dense,
    /// Either arm should find it.
    Either,
    /// Nothing should be found (an unanswerable question); never scored for hits.
    Threshold,
}

impl Arm {
    fn parse(s: &str) -> Option<Arm> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lexical" => Some(Arm::Lexical),
            "dense" => Some(Arm::Dense),
            "" | "either" | "hybrid" => Some(Arm::Either),
            "threshold" | "none" | "unanswerable" => Some(Arm::Threshold),
            _ => None,
        }
    }

    /// The wire name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Arm::Lexical => "lexical",
            Arm::Dense => "dense",
            Arm::Either => "either",
            Arm::Threshold => "threshold",
        }
    }
}

/// How a result path is matched against the judgments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Relevant {
    /// Exact vault paths, all equally relevant.
    Paths(Vec<String>),
    /// Path substrings, any of which makes a path relevant.
    Substrings(Vec<String>),
    /// Exact paths with graded relevance (BEIR qrels).
    Graded(BTreeMap<String, f64>),
}

impl Relevant {
    /// The gain of a result path; 0 when it is not relevant.
    fn gain(&self, path: &str) -> f64 {
        match self {
            Relevant::Paths(p) => f64::from(u8::from(p.iter().any(|x| x == path))),
            Relevant::Substrings(s) => {
                f64::from(u8::from(s.iter().any(|x| path.contains(x.as_str()))))
            }
            Relevant::Graded(g) => g.get(path).copied().unwrap_or(0.0),
        }
    }

    /// How many relevant notes there are (for recall); substrings count one each.
    fn count(&self) -> usize {
        match self {
            Relevant::Paths(p) => p.len(),
            Relevant::Substrings(s) => s.len(),
            Relevant::Graded(g) => g.values().filter(|v| **v > 0.0).count(),
        }
    }

    /// The gains of an ideal ranking, best first.
    fn ideal(&self) -> Vec<f64> {
        let mut gains: Vec<f64> = match self {
            Relevant::Paths(p) => vec![1.0; p.len()],
            Relevant::Substrings(s) => vec![1.0; s.len()],
            Relevant::Graded(g) => g.values().copied().filter(|v| *v > 0.0).collect(),
        };
        gains.sort_by(|a, b| b.total_cmp(a));
        gains
    }

    fn is_empty(&self) -> bool {
        self.count() == 0
    }
}

/// One judged query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EvalQuery {
    /// A stable id (the BEIR id, or the query text).
    pub(crate) id: String,
    /// The query text.
    pub(crate) text: String,
    /// The arm it was written for.
    pub(crate) arm: Arm,
    /// What counts as a hit.
    pub(crate) relevant: Relevant,
    /// Paths (or folders) that must never be returned.
    pub(crate) never: Vec<String>,
    /// Why the query is in the set.
    pub(crate) why: String,
    /// The split it belongs to (`train`, `test`); `None` belongs to every split.
    pub(crate) split: Option<String>,
}

impl EvalQuery {
    /// True when hits are scored for this query (it has judgments and is not a threshold query).
    pub(crate) fn scored(&self) -> bool {
        self.arm != Arm::Threshold && !self.relevant.is_empty()
    }

    /// A digest of what the query asks and how it is judged: a baseline rank means nothing
    /// once the text, the arm or the judgments change.
    pub(crate) fn judgment(&self) -> String {
        use sha2::{Digest, Sha256};
        let relevant = match &self.relevant {
            Relevant::Paths(p) => format!("paths:{}", p.join("\u{0}")),
            Relevant::Substrings(s) => format!("substrings:{}", s.join("\u{0}")),
            Relevant::Graded(g) => {
                let pairs: Vec<String> = g.iter().map(|(p, v)| format!("{p}={v}")).collect();
                format!("graded:{}", pairs.join("\u{0}"))
            }
        };
        let text = format!(
            "{}\u{1}{}\u{1}{relevant}\u{1}{}",
            self.text,
            self.arm.as_str(),
            self.never.join("\u{0}")
        );
        Sha256::digest(text.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// A loaded query set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QuerySet {
    /// The file or folder name, for reports and baselines.
    pub(crate) name: String,
    /// The queries, in file order.
    pub(crate) queries: Vec<EvalQuery>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, msg)
}

/// Loads a query set: a BEIR folder (judged by `qrels/<split>.tsv`, `test` unless a split is
/// named), a `.jsonl` file, or a JSON file (every query, or with a split only the queries of
/// that split and those that name none).
pub(crate) fn load(path: &Path, split: Option<&str>) -> Result<QuerySet> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if path.is_dir() {
        let split = split.unwrap_or("test");
        // Another split is another query set: a baseline of one never passes for the other's.
        let name = if split == "test" { name } else { format!("{name} ({split})") };
        return load_beir(path, &name, split);
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorCode::NotFound,
            format!("cannot read the query file {}: {e}", path.display()),
        )
    })?;
    let mut queries = if name.to_ascii_lowercase().ends_with(".jsonl") {
        parse_jsonl(&text)?
    } else {
        parse_json(&text)?
    };
    // Ids are the query texts, and a baseline keys ranks by id: the same question asked twice
    // (perhaps with other judgments) must not share one.
    let mut taken: HashSet<String> = HashSet::new();
    for q in &mut queries {
        let mut n = 1;
        while !taken.insert(q.id.clone()) {
            n += 1;
            q.id = format!("{} ({n})", q.text);
        }
    }
    let Some(split) = split else { return Ok(QuerySet { name, queries }) };
    // Ids are given before the filter, so a query keeps its id in every split; and the split is
    // named in the set's name, so a baseline of the whole file never passes for half of it.
    queries.retain(|q| q.split.as_deref().is_none_or(|s| s == split));
    Ok(QuerySet { name: format!("{name} ({split})"), queries })
}

/// The first predecessor's format.
pub(crate) fn parse_json(text: &str) -> Result<Vec<EvalQuery>> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("the query file is not JSON: {e}")))?;
    let list = match &v {
        Value::Array(list) => list,
        Value::Object(o) => o.get("queries").and_then(Value::as_array).ok_or_else(|| {
            bad("the query file needs a \"queries\" list of {\"q\", \"expect\", ...} objects")
        })?,
        _ => return Err(bad("the query file must be a JSON object or list")),
    };
    list.iter()
        .enumerate()
        .map(|(i, q)| {
            let at = format!("query {}", i + 1);
            let text = q.get("q").or_else(|| q.get("query")).and_then(Value::as_str);
            let text = text
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| bad(format!("{at} has no \"q\" text")))?;
            let arm_text = q.get("arm").and_then(Value::as_str).unwrap_or("either");
            let arm = Arm::parse(arm_text).ok_or_else(|| {
                bad(format!("{at}: arm {arm_text:?} is not lexical, dense, either or threshold"))
            })?;
            let split = match q.get("split") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Some(_) => return Err(bad(format!("{at}: split must be a name, like \"test\""))),
            };
            Ok(EvalQuery {
                id: text.to_string(),
                text: text.to_string(),
                arm,
                relevant: expected(q.get("expect"), &at)?,
                never: strings(q.get("never"), &at, "never")?,
                why: q.get("why").and_then(Value::as_str).unwrap_or_default().to_string(),
                split,
            })
        })
        .collect()
}

/// The second predecessor's format.
pub(crate) fn parse_jsonl(text: &str) -> Result<Vec<EvalQuery>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = format!("line {}", i + 1);
        let q: Value =
            serde_json::from_str(line).map_err(|e| bad(format!("{at} is not JSON: {e}")))?;
        let text = q.get("query").or_else(|| q.get("q")).and_then(Value::as_str);
        let text = text
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| bad(format!("{at} has no \"query\"")))?;
        let gold = strings(q.get("gold"), &at, "gold")?;
        out.push(EvalQuery {
            id: text.to_string(),
            text: text.to_string(),
            arm: if gold.is_empty() { Arm::Threshold } else { Arm::Either },
            relevant: Relevant::Substrings(gold),
            never: strings(q.get("never"), &at, "never")?,
            why: String::new(),
            split: None,
        });
    }
    Ok(out)
}

/// A JSON query's `expect`: a list of equally relevant paths, or a map of path to gain (the
/// answer highest, a note that answers in part lower).
fn expected(v: Option<&Value>, at: &str) -> Result<Relevant> {
    let Some(Value::Object(map)) = v else {
        return Ok(Relevant::Paths(strings(v, at, "expect")?));
    };
    map.iter()
        .map(|(path, gain)| match gain.as_f64() {
            Some(g) if g >= 0.0 && g.is_finite() => Ok((path.clone(), g)),
            _ => Err(bad(format!("{at}: the gain of {path:?} must be a number, 0 or more"))),
        })
        .collect::<Result<BTreeMap<_, _>>>()
        .map(Relevant::Graded)
}

fn strings(v: Option<&Value>, at: &str, key: &str) -> Result<Vec<String>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(list)) => list
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(format!("{at}: {key} must list strings")))
            })
            .collect(),
        Some(_) => Err(bad(format!("{at}: {key} must be a list of strings"))),
    }
}

/// The vault path a BEIR document becomes: sharded by the id's first two characters so no
/// folder holds thousands of notes.
pub(crate) fn beir_path(id: &str) -> String {
    let mut safe: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    // Two ids that differ only where characters were replaced (`a.b`, `a,b`), or only in case
    // on a case-insensitive disk, must not share a note: such ids carry a digest of the original.
    if safe != id || id.chars().any(|c| c.is_ascii_uppercase()) {
        use sha2::{Digest, Sha256};
        let tag: String =
            Sha256::digest(id.as_bytes()).iter().take(4).map(|b| format!("{b:02x}")).collect();
        safe = format!("{safe}-{tag}");
    }
    let shard: String = safe.chars().take(2).collect();
    format!("{shard}/{safe}.md")
}

fn load_beir(dir: &Path, name: &str, split: &str) -> Result<QuerySet> {
    let read = |rel: &str| {
        std::fs::read_to_string(dir.join(rel)).map_err(|e| {
            Error::new(ErrorCode::NotFound, format!("the BEIR folder lacks {rel} ({e}); it needs corpus.jsonl, queries.jsonl and qrels/{split}.tsv"))
        })
    };
    let qrels = format!("qrels/{split}.tsv");
    let mut texts: HashMap<String, String> = HashMap::new();
    for line in read("queries.jsonl")?.lines().filter(|l| !l.trim().is_empty()) {
        let q: Value =
            serde_json::from_str(line).map_err(|e| bad(format!("queries.jsonl: {e}")))?;
        if let (Some(id), Some(text)) = (json_id(&q), q.get("text").and_then(Value::as_str)) {
            texts.insert(id, text.to_string());
        }
    }
    let mut judged: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (i, line) in read(&qrels)?.lines().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 || (i == 0 && cols[2].parse::<f64>().is_err()) {
            continue;
        }
        let score: f64 = cols[2]
            .trim()
            .parse()
            .map_err(|_| bad(format!("{qrels} line {}: the score is not a number", i + 1)))?;
        judged.entry(cols[0].to_string()).or_default().insert(beir_path(cols[1]), score);
    }
    let mut queries = Vec::new();
    for (id, grades) in judged {
        let text = texts
            .get(&id)
            .ok_or_else(|| bad(format!("qrels name query {id}, which queries.jsonl lacks")))?;
        queries.push(EvalQuery {
            id: id.clone(),
            text: text.clone(),
            arm: Arm::Either,
            relevant: Relevant::Graded(grades),
            never: Vec::new(),
            why: String::new(),
            split: None,
        });
    }
    // Numeric ids in numeric order, so reports read naturally.
    queries.sort_by(|a, b| match (a.id.parse::<u64>(), b.id.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.id.cmp(&b.id),
    });
    Ok(QuerySet { name: name.to_string(), queries })
}

fn json_id(v: &Value) -> Option<String> {
    match v.get("_id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Writes a BEIR corpus as a vault: one note per document (title as H1, then the text), at
/// [`beir_path`], leaving notes that already say the same untouched. Returns how many
/// documents the corpus holds.
pub(crate) fn write_beir_vault(beir: &Path, vault: &Path) -> Result<usize> {
    let corpus = std::fs::read_to_string(beir.join("corpus.jsonl")).map_err(|e| {
        Error::new(
            ErrorCode::NotFound,
            format!("cannot read {}: {e}", beir.join("corpus.jsonl").display()),
        )
    })?;
    let mut written: HashSet<std::path::PathBuf> = HashSet::new();
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let d: Value = serde_json::from_str(line).map_err(|e| bad(format!("corpus.jsonl: {e}")))?;
        let Some(id) = json_id(&d) else { continue };
        let title = d.get("title").and_then(Value::as_str).unwrap_or("").trim();
        let text = d.get("text").and_then(Value::as_str).unwrap_or("").trim();
        let body =
            if title.is_empty() { format!("{text}\n") } else { format!("# {title}\n\n{text}\n") };
        let path = vault.join(beir_path(&id));
        let io = |e: std::io::Error| {
            Error::new(ErrorCode::InternalError, format!("cannot write {}: {e}", path.display()))
        };
        // An unchanged note keeps its mtime, so a second eval re-chunks and re-embeds nothing.
        if std::fs::read(&path).ok().as_deref() != Some(body.as_bytes()) {
            std::fs::create_dir_all(path.parent().unwrap_or(vault)).map_err(io)?;
            std::fs::write(&path, body).map_err(io)?;
        }
        written.insert(path);
    }
    // The folder is this corpus's cache: notes from an earlier, larger version of it go.
    for entry in walkdir::WalkDir::new(vault).min_depth(1).into_iter().flatten() {
        let p = entry.path();
        if entry.file_type().is_file()
            && p.extension().is_some_and(|e| e == "md")
            && !written.contains(p)
        {
            std::fs::remove_file(p).map_err(|e| {
                Error::new(ErrorCode::InternalError, format!("cannot remove {}: {e}", p.display()))
            })?;
        }
    }
    Ok(written.len())
}

/// What one query's results earned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    /// The 1-based rank of the first relevant note, if any was returned.
    pub(crate) rank: Option<usize>,
    /// Reciprocal rank within the first ten notes.
    pub(crate) mrr10: f64,
    /// nDCG over the first ten notes.
    pub(crate) ndcg10: f64,
    /// Relevant notes among the first `k` returned, over all relevant notes.
    pub(crate) recall: f64,
    /// Relevant notes among the first 100 returned, over all relevant notes.
    pub(crate) recall100: f64,
    /// The most results any one note took.
    pub(crate) max_per_note: usize,
    /// `never` paths that were returned.
    pub(crate) leaks: Vec<String>,
}

/// Scores one query's raw result paths (in rank order, passages of one note repeated).
pub(crate) fn score(q: &EvalQuery, results: &[String], k: usize) -> Scored {
    let mut seen = HashSet::new();
    let notes: Vec<&str> = results.iter().map(String::as_str).filter(|p| seen.insert(*p)).collect();
    let gains: Vec<f64> = match &q.relevant {
        // Each substring is one relevant "note": it earns its gain once, on the first note
        // that matches it, so several notes under one gold folder cannot push nDCG past 1.
        Relevant::Substrings(subs) => {
            let mut credited = vec![false; subs.len()];
            notes
                .iter()
                .map(|p| {
                    let mut fresh = false;
                    for (i, s) in subs.iter().enumerate() {
                        if !credited[i] && p.contains(s.as_str()) {
                            credited[i] = true;
                            fresh = true;
                        }
                    }
                    f64::from(u8::from(fresh))
                })
                .collect()
        }
        _ => notes.iter().map(|p| q.relevant.gain(p)).collect(),
    };
    let rank = gains.iter().position(|g| *g > 0.0).map(|i| i + 1);
    let dcg = |g: &[f64]| -> f64 {
        g.iter().take(10).enumerate().map(|(i, g)| g / ((i + 2) as f64).log2()).sum()
    };
    let ideal = dcg(&q.relevant.ideal());
    let relevant = q.relevant.count().max(1) as f64;
    let found = |n: usize| -> f64 {
        match &q.relevant {
            // One substring is one relevant "note": count the substrings matched.
            Relevant::Substrings(subs) => {
                subs.iter().filter(|s| notes.iter().take(n).any(|p| p.contains(s.as_str()))).count()
                    as f64
            }
            _ => gains.iter().take(n).filter(|g| **g > 0.0).count() as f64,
        }
    };
    let mut per_note: HashMap<&str, usize> = HashMap::new();
    for p in results {
        *per_note.entry(p.as_str()).or_default() += 1;
    }
    let leaks = q
        .never
        .iter()
        .filter(|n| {
            let folder = format!("{}/", n.trim_end_matches('/'));
            results.iter().any(|p| p == *n || p.starts_with(&folder))
        })
        .cloned()
        .collect();
    Scored {
        rank,
        mrr10: rank.filter(|r| *r <= 10).map_or(0.0, |r| 1.0 / r as f64),
        ndcg10: if ideal > 0.0 { dcg(&gains) / ideal } else { 0.0 },
        recall: found(k) / relevant,
        recall100: found(100) / relevant,
        max_per_note: per_note.values().copied().max().unwrap_or(0),
        leaks,
    }
}

/// Means over the scored queries of one mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Summary {
    /// Queries scored for hits.
    pub(crate) scored: usize,
    /// Fraction with a relevant note first.
    pub(crate) hit1: f64,
    /// Fraction with a relevant note in the first five.
    pub(crate) hit5: f64,
    /// Fraction with a relevant note in the first ten.
    pub(crate) hit10: f64,
    /// Mean recall at the eval's k.
    pub(crate) recall: f64,
    /// Mean reciprocal rank within ten.
    pub(crate) mrr10: f64,
    /// Mean nDCG@10.
    pub(crate) ndcg10: f64,
    /// Mean recall at 100.
    pub(crate) recall100: f64,
    /// Mean of the most results one note took, over queries that returned something.
    pub(crate) mean_max_per_note: f64,
    /// The worst crowding.
    pub(crate) worst_max_per_note: usize,
    /// `never` leaks over every query (scored or not).
    pub(crate) leaks: usize,
}

/// Summarises one mode's queries. The flag says whether a query is scored for hits; queries
/// that are not (threshold queries, unjudged ones) still count towards crowding and leaks.
pub(crate) fn summarize(all: &[(bool, Scored)]) -> Summary {
    let scored: Vec<&Scored> = all.iter().filter(|(s, _)| *s).map(|(_, x)| x).collect();
    let n = scored.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Scored) -> f64| scored.iter().map(|s| f(s)).sum::<f64>() / n;
    let hit = |k: usize| mean(&|s: &Scored| f64::from(u8::from(s.rank.is_some_and(|r| r <= k))));
    let crowded: Vec<usize> = all.iter().map(|(_, s)| s.max_per_note).filter(|m| *m > 0).collect();
    Summary {
        scored: scored.len(),
        hit1: hit(1),
        hit5: hit(5),
        hit10: hit(10),
        recall: mean(&|s| s.recall),
        mrr10: mean(&|s| s.mrr10),
        ndcg10: mean(&|s| s.ndcg10),
        recall100: mean(&|s| s.recall100),
        mean_max_per_note: crowded.iter().sum::<usize>() as f64 / crowded.len().max(1) as f64,
        worst_max_per_note: crowded.iter().copied().max().unwrap_or(0),
        leaks: all.iter().map(|(_, s)| s.leaks.len()).sum(),
    }
}

/// What a run recorded, so a later run can tell what got worse: the ranks, not the means,
/// because one query falling out of the top k is the regression people notice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Baseline {
    /// The query file's name; runs of different sets are not compared.
    pub(crate) queries: String,
    /// The k the run used.
    pub(crate) k: usize,
    /// The embedding model; vectors from another model rank differently.
    pub(crate) embedder: String,
    /// Per mode, per scored query id: the rank of the first relevant note, or null for a miss.
    pub(crate) ranks: BTreeMap<String, BTreeMap<String, Option<usize>>>,
    /// Per query id, the digest of its text, arm and judgments ([`EvalQuery::judgment`]).
    #[serde(default)]
    pub(crate) judgments: BTreeMap<String, String>,
    /// Per mode, the means when it was recorded (for people reading the file; not compared).
    #[serde(default)]
    pub(crate) summaries: BTreeMap<String, Summary>,
    /// The local model's arithmetic it was recorded under (for people reading the file; not
    /// compared: a baseline per arithmetic is chosen by the `{encoder}` in `--baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encoder: Option<String>,
}

impl Baseline {
    /// The embedder as far as rankings go: a local model is its weights' digest, wherever its
    /// folder is and whatever it is called.
    fn model(&self) -> &str {
        match self.embedder.strip_prefix("local:").and_then(|rest| rest.rsplit_once('@')) {
            Some((_, digest)) => digest,
            None => &self.embedder,
        }
    }

    /// Whether `other` was recorded under the same query file, k and model.
    pub(crate) fn comparable(&self, other: &Baseline) -> Result<()> {
        let redo = "rerun with the same settings, or record this run with --update-baseline";
        if self.queries != other.queries {
            return Err(bad(format!(
                "the baseline is for the query file {:?}, not {:?}; {redo}",
                self.queries, other.queries
            )));
        }
        if self.k != other.k {
            return Err(bad(format!(
                "the baseline was recorded with k={}, this run uses k={}; pass --k {} or {redo}",
                self.k, other.k, self.k
            )));
        }
        if self.model() != other.model() {
            return Err(bad(format!(
                "the baseline was recorded with the embedder {:?}, this run uses {:?}; {redo}",
                self.embedder, other.embedder
            )));
        }
        Ok(())
    }
}

/// One query whose rank moved (or that is new to the baseline).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    /// The mode.
    pub(crate) mode: String,
    /// The query id.
    pub(crate) id: String,
    /// The recorded rank (`None`: a miss, or not recorded).
    pub(crate) before: Option<usize>,
    /// This run's rank.
    pub(crate) after: Option<usize>,
}

/// How a run compares with a baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Comparison {
    /// Hits that became misses, and ranks that worsened: these fail the gate.
    pub(crate) regressions: Vec<Change>,
    /// Misses that became hits, and ranks that improved.
    pub(crate) improvements: Vec<Change>,
    /// Queries the baseline does not know.
    pub(crate) new: Vec<Change>,
    /// Modes this run added (a reranker configured since), not compared.
    pub(crate) modes_new: Vec<String>,
    /// Modes the baseline has and this run did not run.
    pub(crate) modes_missing: Vec<String>,
}

/// Compares a run with a recorded one. Runs with another query file, k or embedder are not
/// comparable, and saying so beats a comparison that means nothing.
pub(crate) fn compare(recorded: &Baseline, run: &Baseline) -> Result<Comparison> {
    recorded.comparable(run)?;
    // A query the baseline knows must still be asked, and judged, the same way: otherwise its
    // recorded rank says nothing about this run.
    let changed: Vec<&String> = recorded
        .judgments
        .iter()
        .filter(|(id, digest)| run.judgments.get(*id) != Some(*digest))
        .map(|(id, _)| id)
        .collect();
    if let Some(first) = changed.first() {
        return Err(bad(format!(
            "{} of the baseline's queries are missing from the query file or judged differently \
             now (the first is {first:?}); if that is deliberate, record the run with \
             --update-baseline",
            changed.len()
        )));
    }
    let mut out = Comparison::default();
    for (mode, ranks) in &run.ranks {
        let Some(before) = recorded.ranks.get(mode) else {
            out.modes_new.push(mode.clone());
            continue;
        };
        for (id, after) in ranks {
            let change =
                |before| Change { mode: mode.clone(), id: id.clone(), before, after: *after };
            match (before.get(id), after) {
                (None, _) => out.new.push(change(None)),
                (Some(Some(b)), None) => out.regressions.push(change(Some(*b))),
                (Some(Some(b)), Some(a)) if a > b => out.regressions.push(change(Some(*b))),
                (Some(Some(b)), Some(a)) if a < b => out.improvements.push(change(Some(*b))),
                (Some(None), Some(_)) => out.improvements.push(change(None)),
                _ => {}
            }
        }
    }
    out.modes_missing =
        recorded.ranks.keys().filter(|m| !run.ranks.contains_key(*m)).cloned().collect();
    Ok(out)
}

/// A baseline the vault MCP server's relevance harness wrote, read (never written) so a
/// migrating user can set mdvault's ranks beside the old ones on their own judged queries. Its
/// per-query ranks are keyed by query text, as mdvault's ids are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ForeignBaseline {
    /// The query file it was recorded for, if it says.
    pub(crate) queries: Option<String>,
    /// The k it was recorded at, if it says.
    pub(crate) k: Option<usize>,
    /// Its embedder, if it says (`hashing`, `ollama`).
    pub(crate) embedder: Option<String>,
    /// Per query text: the rank of the first expected path, or `None` for a miss.
    pub(crate) ranks: BTreeMap<String, Option<usize>>,
}

/// Reads the vault MCP server's `baseline.json`. Its real shape is an object with `k`, the
/// embedder and the query file's name (at the top, or under `meta`), and `queries`: a map of
/// query text to that query's record, an object with its `rank` (null for a miss), `hit`,
/// `arm` and `max_per_path`. Other spellings seen in its history are read too: the per-query
/// map under `ranks` or `per_query`, with a bare rank (or null) per query, and a `results`
/// (or `per_query`, `queries`) list of objects with `q` (or `query`) and `rank`. A query the
/// old harness did not score (`"scored": false`, or a record with neither `rank` nor `hit`)
/// is left out. `None` when nothing in the value is a per-query rank, which is also what
/// mdvault's own baseline (its `ranks` nest a map per mode) gives.
pub(crate) fn read_foreign_baseline(v: &Value) -> Option<ForeignBaseline> {
    let obj = v.as_object()?;
    let mut ranks = BTreeMap::new();
    for key in ["queries", "ranks", "per_query"] {
        if let Some(map) = obj.get(key).and_then(Value::as_object) {
            for (q, record) in map {
                if let Some(rank) = recorded_rank(record) {
                    ranks.insert(q.clone(), rank);
                }
            }
        }
    }
    for key in ["results", "per_query", "queries"] {
        if let Some(list) = obj.get(key).and_then(Value::as_array) {
            for item in list {
                let q = item.get("q").or_else(|| item.get("query")).and_then(Value::as_str);
                if let (Some(q), Some(rank)) = (q, recorded_rank(item)) {
                    ranks.insert(q.to_string(), rank);
                }
            }
        }
    }
    if ranks.is_empty() {
        return None;
    }
    let meta = obj.get("meta").and_then(Value::as_object);
    let field = |k: &str| obj.get(k).or_else(|| meta.and_then(|m| m.get(k)));
    let text = |k: &str| field(k).and_then(Value::as_str).map(str::to_string);
    Some(ForeignBaseline {
        queries: text("queries").or_else(|| text("queries_file")).or_else(|| text("query_file")),
        k: field("k").and_then(Value::as_u64).map(|k| k as usize),
        embedder: text("embedder"),
        ranks,
    })
}

/// One query's recorded outcome in the old harness's baseline: `Some(Some(rank))` for a hit,
/// `Some(None)` for a miss (a null or zero rank, or `"hit": false` without one), and `None`
/// for anything that records no scored rank (an unscored query, or a map of other things).
fn recorded_rank(record: &Value) -> Option<Option<usize>> {
    match record {
        Value::Number(n) => Some(n.as_u64().filter(|r| *r > 0).map(|r| r as usize)),
        Value::Null => Some(None),
        Value::Object(o) if o.get("scored").and_then(Value::as_bool) == Some(false) => None,
        Value::Object(o) => match (o.get("rank"), o.get("hit").and_then(Value::as_bool)) {
            (Some(rank @ (Value::Number(_) | Value::Null)), _) => recorded_rank(rank),
            (_, Some(false)) => Some(None),
            _ => None,
        },
        _ => None,
    }
}

/// Sets one mode's ranks of this run beside a foreign baseline's: worse ranks and lost hits as
/// regressions, better ones as improvements, queries it never saw as new. Its queries this run
/// did not ask are left out (the query file may hold more than the old set).
pub(crate) fn compare_foreign(
    old: &ForeignBaseline,
    mode: &str,
    run: &BTreeMap<String, Option<usize>>,
) -> Comparison {
    let mut out = Comparison::default();
    for (id, after) in run {
        let change =
            |before| Change { mode: mode.to_string(), id: id.clone(), before, after: *after };
        match (old.ranks.get(id), after) {
            (None, _) => out.new.push(change(None)),
            (Some(Some(b)), None) => out.regressions.push(change(Some(*b))),
            (Some(Some(b)), Some(a)) if a > b => out.regressions.push(change(Some(*b))),
            (Some(Some(b)), Some(a)) if a < b => out.improvements.push(change(Some(*b))),
            (Some(None), Some(_)) => out.improvements.push(change(None)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vault_mcp_servers_baseline_is_read_in_either_shape_and_compared() {
        let map = serde_json::json!({"embedder": "hashing", "queries": "queries.json", "k": 6,
            "recall": 1.0, "ranks": {"boiler": 1, "zfs snapshot retention": 2, "gone": null}});
        let b = read_foreign_baseline(&map).unwrap();
        assert_eq!(
            (b.k, b.embedder.as_deref(), b.queries.as_deref()),
            (Some(6), Some("hashing"), Some("queries.json"))
        );
        assert_eq!(b.ranks["zfs snapshot retention"], Some(2));
        assert_eq!(b.ranks["gone"], None);
        let list = serde_json::json!({"k": 6, "results": [{"q": "boiler", "rank": 1, "hit": true},
            {"query": "mpan", "rank": null}]});
        let l = read_foreign_baseline(&list).unwrap();
        assert_eq!(l.ranks.len(), 2);
        // Its real file: `queries` maps each query to a record; unscored ones are left out.
        let real = serde_json::json!({"embedder": "hashing", "queries_file": "queries.json",
            "k": 6, "summary": {"scored": 3, "hits": 2, "recall": 0.667},
            "queries": {
                "boiler": {"arm": "lexical", "hit": true, "rank": 1, "max_per_path": 1},
                "zfs snapshot retention": {"arm": "either", "hit": true, "rank": 2},
                "gone": {"arm": "lexical", "hit": false, "rank": null, "max_per_path": 0},
                "meaning only": {"arm": "dense", "scored": false, "rank": null},
                "no threshold": {"arm": "threshold"}}});
        let r = read_foreign_baseline(&real).unwrap();
        assert_eq!(
            (r.k, r.embedder.as_deref(), r.queries.as_deref()),
            (Some(6), Some("hashing"), Some("queries.json"))
        );
        assert_eq!(r.ranks, b.ranks, "the same ranks as the flat map says");
        // mdvault's own baseline (ranks per mode) and unrelated JSON are not foreign ones.
        let ours = serde_json::json!({"queries": "q.json", "k": 6, "embedder": "x", "ranks": {"hybrid": {"boiler": 1}}});
        assert!(read_foreign_baseline(&ours).is_none());
        assert!(read_foreign_baseline(&serde_json::json!({"k": 6})).is_none());

        let run: BTreeMap<String, Option<usize>> = [
            ("boiler".to_string(), Some(2)),
            ("zfs snapshot retention".to_string(), Some(1)),
            ("gone".to_string(), Some(3)),
            ("brand new".to_string(), None),
        ]
        .into();
        let c = compare_foreign(&b, "hybrid", &run);
        assert_eq!(c.regressions.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), ["boiler"]);
        assert_eq!(c.improvements.len(), 2);
        assert_eq!(c.new.len(), 1);
    }

    fn q(relevant: Relevant, never: &[&str]) -> EvalQuery {
        EvalQuery {
            id: "q".into(),
            text: "q".into(),
            arm: Arm::Either,
            relevant,
            never: never.iter().map(|s| s.to_string()).collect(),
            why: String::new(),
            split: None,
        }
    }

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranks_count_notes_not_passages() {
        let query = q(Relevant::Paths(paths(&["b.md"])), &[]);
        let s = score(&query, &paths(&["a.md", "a.md", "b.md"]), 6);
        assert_eq!(s.rank, Some(2), "a.md twice is still one note ahead");
        assert_eq!(s.mrr10, 0.5);
        assert_eq!(s.max_per_note, 2);
        assert!((s.ndcg10 - 1.0 / 3f64.log2()).abs() < 1e-9);
        assert_eq!(s.recall, 1.0);
        let miss = score(&query, &paths(&["a.md"]), 6);
        assert_eq!((miss.rank, miss.mrr10, miss.ndcg10, miss.recall), (None, 0.0, 0.0, 0.0));
    }

    #[test]
    fn graded_ndcg_and_recall_follow_the_judgments() {
        let grades: BTreeMap<String, f64> =
            [("x.md".to_string(), 2.0), ("y.md".to_string(), 1.0)].into_iter().collect();
        let query = q(Relevant::Graded(grades), &[]);
        let perfect = score(&query, &paths(&["x.md", "y.md"]), 10);
        assert!((perfect.ndcg10 - 1.0).abs() < 1e-9);
        let swapped = score(&query, &paths(&["y.md", "x.md"]), 10);
        assert!(swapped.ndcg10 < 1.0 && swapped.ndcg10 > 0.8, "{}", swapped.ndcg10);
        let half = score(&query, &paths(&["x.md", "z.md"]), 1);
        assert_eq!(half.recall, 0.5);
    }

    #[test]
    fn substrings_and_never_folders_match_as_documented() {
        let query = q(Relevant::Substrings(paths(&["Boiler"])), &["Workflows"]);
        let s = score(&query, &paths(&["Home/Boiler.md", "Workflows/Logs/x.md"]), 6);
        assert_eq!(s.rank, Some(1));
        assert_eq!(s.leaks, ["Workflows"]);
        let clean = score(&query, &paths(&["Workflows Archive/x.md"]), 6);
        assert!(clean.leaks.is_empty(), "a sibling folder with a longer name is not a leak");
    }

    #[test]
    fn the_three_formats_load() {
        let json = r#"{"queries": [
            {"q": "NB-7726041", "arm": "lexical", "expect": ["Home/Boiler.md"], "why": "plate"},
            {"q": "is there anything about dragons", "arm": "threshold"},
            {"q": "boiler", "never": "Workflows"}
        ]}"#;
        let qs = parse_json(json).unwrap();
        assert_eq!(qs.len(), 3);
        assert_eq!(qs[0].arm, Arm::Lexical);
        assert!(qs[0].scored() && !qs[1].scored() && !qs[2].scored());
        assert_eq!(qs[2].never, ["Workflows"]);
        assert!(parse_json(r#"{"queries": [{"q": "x", "arm": "sideways"}]}"#).is_err());
        let jsonl = "{\"query\": \"gas meter\", \"gold\": [\"Gas\"]}\n\n{\"query\": \"nothing\"}\n";
        let qs = parse_jsonl(jsonl).unwrap();
        assert_eq!(qs[0].relevant, Relevant::Substrings(paths(&["Gas"])));
        assert_eq!(qs[1].arm, Arm::Threshold);

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\": \"101\", \"title\": \"T\", \"text\": \"Body.\"}\n{\"_id\": \"7\", \"title\": \"\", \"text\": \"Other.\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\": \"2\", \"text\": \"second\"}\n{\"_id\": \"10\", \"text\": \"tenth\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\n10\t101\t1\n2\t7\t1\n",
        )
        .unwrap();
        let set = load(dir.path(), Some("test")).unwrap();
        let ids: Vec<&str> = set.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["2", "10"]);
        assert_eq!(set.queries[1].relevant.gain("10/101.md"), 1.0);
        // Another split is read from its own qrels file and named apart from the test split.
        std::fs::write(dir.path().join("qrels/train.tsv"), "2\t101\t1\n").unwrap();
        let train = load(dir.path(), Some("train")).unwrap();
        assert_eq!(train.queries.len(), 1);
        assert_eq!(train.queries[0].relevant.gain("10/101.md"), 1.0);
        assert_ne!(train.name, set.name);
        assert!(load(dir.path(), Some("dev")).is_err(), "a split with no qrels file is refused");
        let vault = tempfile::tempdir().unwrap();
        assert_eq!(write_beir_vault(dir.path(), vault.path()).unwrap(), 2);
        assert_eq!(
            std::fs::read_to_string(vault.path().join("10/101.md")).unwrap(),
            "# T\n\nBody.\n"
        );
        assert_eq!(std::fs::read_to_string(vault.path().join("7/7.md")).unwrap(), "Other.\n");
    }

    #[test]
    fn a_json_set_grades_its_answers_and_splits_into_halves() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("real.json");
        std::fs::write(
            &file,
            r#"{"queries": [
                {"q": "one", "expect": {"a.md": 2, "b.md": 1}, "split": "train"},
                {"q": "two", "expect": ["c.md"], "split": "test"},
                {"q": "three", "expect": ["d.md"]}
            ]}"#,
        )
        .unwrap();
        let all = load(&file, None).unwrap();
        assert_eq!(all.queries.len(), 3);
        assert_eq!(all.name, "real.json");
        let one = &all.queries[0];
        assert_eq!((one.relevant.gain("a.md"), one.relevant.gain("b.md")), (2.0, 1.0));
        assert_eq!(one.split.as_deref(), Some("train"));
        // The closely relevant note alone earns less than the answer alone.
        let partial = score(one, &paths(&["b.md"]), 6);
        assert_eq!(partial.rank, Some(1));
        assert!(partial.ndcg10 < score(one, &paths(&["a.md"]), 6).ndcg10);

        let texts = |split| -> Vec<String> {
            load(&file, Some(split)).unwrap().queries.into_iter().map(|q| q.text).collect()
        };
        assert_eq!(texts("train"), ["one", "three"], "a query naming no split is in both");
        assert_eq!(texts("test"), ["two", "three"]);
        assert_eq!(load(&file, Some("test")).unwrap().name, "real.json (test)");

        let refused = [
            r#"[{"q": "x", "expect": {"a.md": -1}}]"#,
            r#"[{"q": "x", "expect": {"a.md": "high"}}]"#,
            r#"[{"q": "x", "expect": ["a.md"], "split": 1}]"#,
        ];
        for text in refused {
            assert!(parse_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn summaries_average_only_scored_queries_but_count_every_leak() {
        let hit = Scored {
            rank: Some(1),
            mrr10: 1.0,
            ndcg10: 1.0,
            recall: 1.0,
            recall100: 1.0,
            max_per_note: 2,
            leaks: vec![],
        };
        let miss = Scored {
            rank: None,
            mrr10: 0.0,
            ndcg10: 0.0,
            recall: 0.0,
            recall100: 0.0,
            max_per_note: 1,
            leaks: vec![],
        };
        let leak = Scored { leaks: vec!["W".into()], ..miss.clone() };
        let s = summarize(&[(true, hit), (true, miss), (false, leak)]);
        assert_eq!(s.scored, 2);
        assert_eq!((s.hit1, s.mrr10, s.leaks, s.worst_max_per_note), (0.5, 0.5, 1, 2));
    }

    fn recorded(k: usize, ranks: &[(&str, Option<usize>)]) -> Baseline {
        let ranks = ranks.iter().map(|(id, r)| (id.to_string(), *r)).collect();
        Baseline {
            queries: "q.json".into(),
            k,
            embedder: "m".into(),
            ranks: [("hybrid".to_string(), ranks)].into_iter().collect(),
            judgments: BTreeMap::new(),
            summaries: BTreeMap::new(),
            encoder: None,
        }
    }

    #[test]
    fn a_lost_hit_or_a_worse_rank_regresses_and_gains_are_only_reported() {
        let before = recorded(6, &[("a", Some(1)), ("b", Some(2)), ("c", None), ("d", Some(3))]);
        let after = recorded(
            6,
            &[("a", None), ("b", Some(3)), ("c", Some(4)), ("d", Some(1)), ("e", Some(1))],
        );
        let c = compare(&before, &after).unwrap();
        let ids = |v: &[Change]| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&c.regressions), ["a", "b"]);
        assert_eq!(ids(&c.improvements), ["c", "d"]);
        assert_eq!(ids(&c.new), ["e"]);
        assert_eq!((c.regressions[0].before, c.regressions[0].after), (Some(1), None));
        assert!(compare(&before, &before).unwrap().regressions.is_empty());
    }

    #[test]
    fn runs_with_another_k_embedder_or_query_file_are_not_compared() {
        let base = recorded(6, &[("a", Some(1))]);
        let e = compare(&base, &recorded(10, &[("a", Some(1))])).unwrap_err();
        assert!(e.message().contains("--k 6"), "{}", e.message());
        let other = Baseline { embedder: "x".into(), ..base.clone() };
        assert!(compare(&base, &other).unwrap_err().message().contains("embedder"));
        let other = Baseline { queries: "y.json".into(), ..base.clone() };
        assert!(compare(&base, &other).unwrap_err().message().contains("query file"));
        let mut extra = base.clone();
        extra.ranks.insert("thorough".into(), BTreeMap::new());
        assert_eq!(compare(&base, &extra).unwrap().modes_new, ["thorough"]);
        assert_eq!(compare(&extra, &base).unwrap().modes_missing, ["thorough"]);
        // The same model in another folder is the same model.
        let a = Baseline { embedder: "local:all-MiniLM-L6-v2@53aa51172d14".into(), ..base.clone() };
        let b = Baseline { embedder: "local:minilm@53aa51172d14".into(), ..base.clone() };
        assert!(compare(&a, &b).is_ok());
    }

    #[test]
    fn a_query_dropped_or_judged_differently_makes_the_baseline_incomparable() {
        let mut before = recorded(6, &[("a", Some(1)), ("b", Some(2))]);
        before.judgments = [("a".into(), "1".into()), ("b".into(), "2".into())].into();
        let mut after = before.clone();
        after.judgments.insert("c".into(), "3".into());
        assert!(compare(&before, &after).is_ok(), "a new query is fine");
        after.judgments.insert("b".into(), "changed".into());
        let e = compare(&before, &after).unwrap_err();
        assert!(e.message().contains("\"b\"") && e.message().contains("--update-baseline"));
        after.judgments.remove("b");
        assert!(compare(&before, &after).is_err(), "a dropped query too");
    }

    #[test]
    fn repeated_queries_get_distinct_ids_and_judgments_follow_the_judging() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("q.json");
        std::fs::write(
            &file,
            r#"[{"q": "X", "expect": ["a.md"]}, {"q": "X", "expect": ["b.md"]}, {"q": "X (2)"}]"#,
        )
        .unwrap();
        let set = load(&file, None).unwrap();
        let ids: Vec<&str> = set.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["X", "X (2)", "X (2) (2)"]);
        assert_ne!(set.queries[0].judgment(), set.queries[1].judgment());
    }

    #[test]
    fn substring_gold_earns_each_gain_once() {
        let query = q(Relevant::Substrings(paths(&["Vehicles/"])), &[]);
        let s = score(&query, &paths(&["Vehicles/a.md", "Vehicles/b.md", "Vehicles/c.md"]), 6);
        assert!((s.ndcg10 - 1.0).abs() < 1e-9, "{}", s.ndcg10);
        assert_eq!((s.rank, s.recall), (Some(1), 1.0));
    }

    #[test]
    fn beir_ids_that_would_collide_get_distinct_notes() {
        assert_eq!(beir_path("4983"), "49/4983.md");
        let (a, b, c) = (beir_path("a.b"), beir_path("a,b"), beir_path("Ab"));
        assert!(a != b && a.starts_with("a_/a_b-") && b.starts_with("a_/a_b-"), "{a} {b}");
        assert_ne!(c, beir_path("ab"));
    }
}
