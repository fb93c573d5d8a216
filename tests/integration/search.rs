//! Hybrid search over the fixture vault with the real local model: identifiers, paraphrases,
//! filters, the lookup override, warm-equals-cold builds, store repair and the watcher.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mdvault::ErrorCode;
use mdvault::config::Config;
use mdvault::embed::Embedder;
use mdvault::engine::{Engine, Phase};
use mdvault::index::Silent;
use mdvault::search::{Matched, Mode, RerankState, SearchRequest};
use mdvault::vault::VaultScope;

use crate::common::{TempVault, model_dir, test_config};

/// The real local model (the safetensors file is memory-mapped, so loads share its pages).
fn embedder() -> Embedder {
    Embedder::Local(
        mdvault::embed::local::LocalEmbedder::load(&model_dir()).unwrap_or_else(|e| {
            panic!("{e}; run scripts/fetch-model.sh (or set MDVAULT_MODEL_DIR)")
        }),
    )
}

struct Fixture {
    vault: TempVault,
    data: tempfile::TempDir,
    engine: Engine,
}

fn config_for(vault: &TempVault, data: &std::path::Path) -> Config {
    let mut c = test_config(vault.root(), data);
    c.search.exclude_dirs = vec!["Workflows".into(), "Reports".into()];
    c.watch_debounce_seconds = 0.2;
    c
}

fn indexed_fixture() -> Fixture {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    engine.sync(None, false, &Silent).unwrap();
    Fixture { vault, data, engine }
}

fn shared() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(indexed_fixture)
}

fn top(engine: &Engine, q: &str, k: usize) -> Vec<(String, Matched, bool)> {
    let mut req = SearchRequest::new(q);
    req.k = Some(k);
    engine
        .search(&req)
        .unwrap()
        .results
        .into_iter()
        .map(|h| (h.path, h.matched, h.pinned))
        .collect()
}

#[test]
fn identifiers_are_pinned_first_and_decoys_never_appear() {
    let f = shared();
    for (query, expect) in [
        ("NB-7726041", "Home/Utilities/Broadband.md"),
        ("DP-4418-K", "Home/Appliances.md"),
        ("1730028845196", "Home/Utilities/Electricity.md"),
    ] {
        let got = top(&f.engine, query, 6);
        assert_eq!(got[0].0, expect, "{query}: {got:?}");
        assert!(got[0].2, "{query} should be pinned: {got:?}");
        assert!(
            got.iter().all(|(p, _, _)| !p.starts_with("Workflows/") && !p.starts_with("Reports/")),
            "{query} leaked a decoy: {got:?}"
        );
    }
}

#[test]
fn paraphrases_are_found_by_meaning() {
    let f = shared();
    let got = top(&f.engine, "when do I have my next check-up for my teeth", 6);
    assert!(
        got.iter().take(3).any(|(p, _, _)| p == "Personal/Rhiannon/Health/Dentist.md"),
        "{got:?}"
    );
    let got = top(&f.engine, "how can I get back a photo I deleted by mistake", 6);
    assert!(got.iter().take(3).any(|(p, _, _)| p == "Tech/NAS.md"), "{got:?}");
}

#[test]
fn a_note_takes_at_most_the_cap_and_results_say_which_arm_found_them() {
    let f = shared();
    let mut req = SearchRequest::new("car MOT tax insurance renewal");
    req.k = Some(6);
    let resp = f.engine.search(&req).unwrap();
    assert_eq!(resp.results.len(), 6);
    let mut per_note = std::collections::HashMap::new();
    for h in &resp.results {
        *per_note.entry(h.path.clone()).or_insert(0) += 1;
    }
    assert!(per_note.values().all(|n| *n <= 2), "{per_note:?}");
    assert!(resp.results.iter().any(|h| h.matched == Matched::Both));
    assert!(resp.results.iter().all(|h| h.explain.fused > 0.0 && h.explain.fused <= 1.0));
}

#[test]
fn prefix_and_vault_filters_apply_before_the_candidate_windows() {
    let f = shared();
    let mut req = SearchRequest::new("account number");
    req.prefix = Some("home/utilities".into());
    let resp = f.engine.search(&req).unwrap();
    assert!(!resp.results.is_empty());
    assert!(
        resp.results.iter().all(|h| h.path.starts_with("Home/Utilities/")),
        "{:?}",
        resp.results
    );

    req.prefix = Some("Home/Util".into());
    let err = f.engine.search(&req).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.message().contains("Home"), "{}", err.message());

    let mut req = SearchRequest::new("boiler");
    req.scope = VaultScope::One("nope".into());
    assert_eq!(f.engine.search(&req).unwrap_err().code(), ErrorCode::NotFound);
    req.scope = VaultScope::One("fixture".into());
    assert!(!f.engine.search(&req).unwrap().results.is_empty());
}

#[test]
fn single_arm_modes_report_their_own_arm() {
    let f = shared();
    let mut req = SearchRequest::new("ferry booking");
    req.mode = Mode::Lexical;
    let lexical = f.engine.search(&req).unwrap();
    assert!(lexical.results.iter().all(|h| h.matched == Matched::Lexical));
    req.mode = Mode::Dense;
    let dense = f.engine.search(&req).unwrap();
    assert!(dense.results.iter().all(|h| h.matched == Matched::Dense));
    assert!(!dense.results.is_empty());
}

#[test]
fn cjk_notes_are_findable_lexically() {
    let f = shared();
    let mut req = SearchRequest::new("豆腐");
    req.mode = Mode::Lexical;
    let got = f.engine.search(&req).unwrap();
    assert_eq!(got.results.first().map(|h| h.path.as_str()), Some("Personal/Recipes/麻婆豆腐.md"));
}

#[test]
fn a_warm_build_equals_a_cold_one_and_embeds_nothing() {
    let f = shared();
    let again = f.engine.sync(None, false, &Silent).unwrap();
    assert_eq!(again[0].1.files_chunked, 0);
    assert_eq!(again[0].1.texts_embedded, 0);

    // A second, cold build elsewhere: same chunks in the same order, bit-identical vectors.
    let data = tempfile::tempdir().unwrap();
    let cold = Engine::with_embedder(config_for(&f.vault, data.path()), embedder()).unwrap();
    cold.sync(None, false, &Silent).unwrap();
    let a = f.engine.index().store().all_chunk_infos().unwrap();
    let b = cold.index().store().all_chunk_infos().unwrap();
    let strip = |v: &[mdvault::index::store::ChunkInfo]| {
        v.iter()
            .map(|c| (c.path.clone(), c.breadcrumb.clone(), c.line, c.embed_hash))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&a), strip(&b));
    let va = f
        .engine
        .index()
        .store()
        .chunk_vectors(&a.iter().map(|c| c.id).collect::<Vec<_>>())
        .unwrap();
    let vb =
        cold.index().store().chunk_vectors(&b.iter().map(|c| c.id).collect::<Vec<_>>()).unwrap();
    assert_eq!(va.len(), a.len());
    for ((_, x), (_, y)) in va.iter().zip(&vb) {
        assert_eq!(
            x.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
        );
    }
    let warm = Engine::with_embedder(config_for(&f.vault, f.data.path()), embedder()).unwrap();
    assert_eq!(top(&warm, "NB-7726041", 3), top(&f.engine, "NB-7726041", 3));
}

#[test]
fn a_store_out_of_step_with_the_lexical_index_is_repaired_on_open() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    engine.sync(None, false, &Silent).unwrap();
    let before = top(&engine, "ferry booking CFY-77310", 3);
    // As if the process died between the store's commit and the lexical index's.
    engine.index().store().set_meta("generation", "999999").unwrap();
    drop(engine);
    let reopened = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    assert_eq!(top(&reopened, "ferry booking CFY-77310", 3), before);
    // And with the lexical folder gone entirely.
    drop(reopened);
    std::fs::remove_dir_all(data.path().join("lexical")).unwrap();
    let reopened = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    assert_eq!(top(&reopened, "ferry booking CFY-77310", 3), before);
}

#[test]
fn chunks_of_a_vault_no_longer_configured_are_never_results() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    engine.sync(None, false, &Silent).unwrap();
    drop(engine);
    // The same data directory, now serving another vault only.
    let other = TempVault::empty();
    other.write("Trips.md", "# Trips\n\nThe ferry to Carrow leaves at nine.\n");
    let mut c = test_config(other.root(), data.path());
    c.vaults[0].name = "other".into();
    let engine = Engine::with_embedder(c, embedder()).unwrap();
    engine.sync(None, false, &Silent).unwrap();
    for mode in [Mode::Hybrid, Mode::Lexical, Mode::Dense] {
        let mut req = SearchRequest::new("ferry booking CFY-77310");
        req.mode = mode;
        let paths: Vec<String> =
            engine.search(&req).unwrap().results.into_iter().map(|h| h.path).collect();
        assert_eq!(paths, ["Trips.md"], "{mode:?}");
    }
}

#[test]
fn the_store_is_private_and_outside_the_vault() {
    let f = shared();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(f.data.path()), 0o700);
        assert_eq!(mode(&f.data.path().join("index.db")), 0o600);
    }
    assert!(!f.data.path().starts_with(f.vault.root()));
}

fn wait_for(
    engine: &Engine,
    query: &str,
    want: impl Fn(&[(String, Matched, bool)]) -> bool,
) -> Vec<(String, Matched, bool)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let mut req = SearchRequest::new(query);
        req.k = Some(6);
        req.mode = Mode::Lexical;
        let got: Vec<_> = engine
            .search(&req)
            .unwrap()
            .results
            .into_iter()
            .map(|h| (h.path, h.matched, h.pinned))
            .collect();
        if want(&got) || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_watcher_follows_edits_renames_and_deletes() {
    let f = indexed_fixture();
    // The watches are in place when `watch` returns: nothing to wait for.
    let _watch = f.engine.watch().unwrap();

    f.vault.write(
        "Inbox/Quokka.md",
        "# Quokka\n\nThe zanzibarite quokka sighting was logged on Tuesday.\n",
    );
    let got =
        wait_for(&f.engine, "zanzibarite", |r| r.iter().any(|(p, _, _)| p == "Inbox/Quokka.md"));
    assert!(got.iter().any(|(p, _, _)| p == "Inbox/Quokka.md"), "new note not indexed: {got:?}");

    std::fs::rename(
        f.vault.root().join("Inbox/Quokka.md"),
        f.vault.root().join("Inbox/Wallaby.md"),
    )
    .unwrap();
    let got = wait_for(&f.engine, "zanzibarite", |r| r.len() == 1 && r[0].0 == "Inbox/Wallaby.md");
    assert_eq!(got.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["Inbox/Wallaby.md"]);

    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("Trip/Days")).unwrap();
    std::fs::write(
        outside.path().join("Trip/Days/Day one.md"),
        "# Day one\n\nWe saw a marsupial called a quoll.\n",
    )
    .unwrap();
    std::fs::rename(outside.path().join("Trip"), f.vault.root().join("Trip")).unwrap_or_else(
        |_| {
            crate::common::copy_tree(&outside.path().join("Trip"), &f.vault.root().join("Trip"));
        },
    );
    let got =
        wait_for(&f.engine, "quoll", |r| r.iter().any(|(p, _, _)| p == "Trip/Days/Day one.md"));
    assert!(
        got.iter().any(|(p, _, _)| p == "Trip/Days/Day one.md"),
        "moved-in folder not adopted: {got:?}"
    );

    std::fs::remove_file(f.vault.root().join("Inbox/Wallaby.md")).unwrap();
    let got = wait_for(&f.engine, "zanzibarite", |r| r.is_empty());
    assert!(got.is_empty(), "deleted note still found: {got:?}");
}

#[test]
fn the_reconcile_pass_catches_what_no_watcher_saw() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let mut config = config_for(&vault, data.path());
    config.index.reconcile_seconds = 0.3;
    let engine = Engine::with_embedder(config, embedder()).unwrap();
    engine.sync(None, false, &Silent).unwrap();
    let reconciler = engine.reconcile().expect("a positive interval starts the pass");
    vault.write("Inbox/Unwatched.md", "# Unwatched\n\nA platypusine remark nobody announced.\n");
    let got = wait_for(&engine, "platypusine", |r| !r.is_empty());
    assert_eq!(got.first().map(|r| r.0.as_str()), Some("Inbox/Unwatched.md"));
    drop(reconciler);
}

/// A `/v1/rerank` endpoint on loopback that scores documents by how many times they contain
/// `favourite`, answering `requests` times, then closing.
fn fake_reranker(favourite: &'static str, requests: usize) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/rerank", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let results: Vec<serde_json::Value> = req["documents"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let score = d.as_str().unwrap().to_lowercase().matches(favourite).count();
                    serde_json::json!({"index": i, "relevance_score": score as f64})
                })
                .collect();
            let reply = serde_json::json!({ "results": results }).to_string();
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}", reply.len()).unwrap();
        }
    });
    url
}

#[test]
fn a_reranker_reorders_the_head_and_its_failure_falls_back_to_fused_order() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let base = config_for(&vault, data.path());
    let plain = Engine::with_embedder(base.clone(), embedder()).unwrap();
    plain.sync(None, false, &Silent).unwrap();
    let query = "household bills and payments";
    let mut req = SearchRequest::new(query);
    req.k = Some(5);
    let fused = plain.search(&req).unwrap();
    assert_eq!(fused.explain.rerank, RerankState::NotConfigured);
    drop(plain);

    // Reranked purely (thorough): chunks mentioning "water" the most come first.
    let mut config = base.clone();
    config.rerank.url = fake_reranker("water", 2);
    let engine = Engine::with_embedder(config, embedder()).unwrap();
    let mut thorough = req.clone();
    thorough.thorough = true;
    let got = engine.search(&thorough).unwrap();
    assert_eq!(got.explain.rerank, RerankState::Used);
    assert!(got.results.iter().all(|h| h.explain.rerank_rank.is_some()));
    let first = &got.results[0];
    assert_eq!(first.explain.rerank_rank, Some(1));
    assert!(first.text.to_lowercase().contains("water"), "{}", first.path);
    // --no-rerank skips it.
    let mut off = req.clone();
    off.rerank = false;
    assert_eq!(engine.search(&off).unwrap().explain.rerank, RerankState::Off);
    drop(engine);

    // An endpoint that is not there: fused order, a notice, no error.
    let mut config = base;
    config.rerank.url = "http://127.0.0.1:9/v1/rerank".into();
    let engine = Engine::with_embedder(config, embedder()).unwrap();
    let got = engine.search(&req).unwrap();
    assert!(matches!(got.explain.rerank, RerankState::FellBack(_)), "{}", got.explain.rerank);
    assert!(!got.notices.is_empty());
    let paths = |r: &mdvault::search::SearchResponse| {
        r.results.iter().map(|h| h.path.clone()).collect::<Vec<_>>()
    };
    assert_eq!(paths(&got), paths(&fused));
}

#[test]
fn chunks_left_without_vectors_are_embedded_on_the_next_sync() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let engine = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    let first = engine.sync(None, false, &Silent).unwrap();
    let embedded = first[0].1.texts_embedded;
    assert!(embedded > 0);
    // As if the process died after the chunks were committed and before their vectors were.
    engine.index().store().drop_vectors().unwrap();
    drop(engine);
    let reopened = Engine::with_embedder(config_for(&vault, data.path()), embedder()).unwrap();
    assert_eq!(reopened.index().counts().1, 0, "no vectors survived");
    let again = reopened.sync(None, false, &Silent).unwrap();
    assert_eq!(again[0].1.files_chunked, 0, "the chunks were kept");
    assert_eq!(again[0].1.texts_embedded, embedded, "every missing vector was embedded once");
    let (chunks, vectors) = reopened.index().counts();
    assert_eq!(chunks, vectors);
    assert!(!top(&reopened, "how can I get back a photo I deleted by mistake", 3).is_empty());
}

/// A restart over a finished index serves search while its first pass catches up (saying so).
#[test]
fn a_restart_over_a_finished_index_searches_while_it_catches_up() {
    let url = crate::common::fake_embedding_endpoint_slow(
        16,
        "SLOWPOKE",
        std::time::Duration::from_secs(4),
    );
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let mut config = config_for(&vault, data.path());
    config.embedding.backend =
        mdvault::config::EmbeddingBackend::Http { url: url.clone(), model: "toy".into(), dims: 16 };
    let first = std::sync::Arc::new(Engine::open(config.clone()).unwrap());
    first.sync(None, false, &Silent).unwrap();
    drop(first);

    // While it was stopped a note arrived whose embedding takes a while.
    vault.write("Inbox/Arrived.md", "# Arrived\n\nSLOWPOKE: written while the server was down.\n");
    let engine = std::sync::Arc::new(Engine::open(config.clone()).unwrap());
    let _background = engine.start_background();
    let got = engine.search(&SearchRequest::new("boiler pressure")).expect("served meanwhile");
    assert_eq!(engine.phase(), Phase::Building, "the first pass is still embedding");
    assert!(!got.results.is_empty());
    assert!(got.notices.iter().any(|n| n.contains("catching up")), "{:?}", got.notices);
}

/// A first build (nothing stored yet) with a slow embedder: search answers by words within
/// seconds, long before the vectors are in, and says how far the build is; `status` shows the
/// running pass with its stage. Before anything is committed it is `not_ready`, never an empty
/// answer that would read as "nothing matches".
#[test]
fn search_answers_during_a_first_build_and_says_how_far_it_is() {
    let url = crate::common::fake_embedding_endpoint_slow(
        16,
        "SLOWPOKE",
        std::time::Duration::from_secs(6),
    );
    let vault = TempVault::fixture();
    vault.write("Inbox/Arrived.md", "# Arrived\n\nSLOWPOKE: a note slow to embed.\n");
    let data = tempfile::tempdir().unwrap();
    let mut config = config_for(&vault, data.path());
    config.embedding.backend =
        mdvault::config::EmbeddingBackend::Http { url, model: "toy".into(), dims: 16 };
    let engine = std::sync::Arc::new(Engine::open(config).unwrap());
    let _background = engine.start_background();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let got = loop {
        match engine.search(&SearchRequest::new("boiler pressure")) {
            Ok(got) => break got,
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::NotReady, "{e}");
                assert!(e.message().contains("still being built"), "{e}");
                assert!(std::time::Instant::now() < deadline, "no answer by words in time: {e}");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    };
    assert_eq!(engine.phase(), Phase::Building, "the embedder still holds the build");
    let (chunks, vectors) = engine.index().counts();
    assert!(vectors < chunks, "vectors are still missing: {vectors} of {chunks}");
    assert!(got.results.iter().any(|r| r.path.contains("Boiler")), "found by words: {got:?}");
    assert!(
        got.notices.iter().any(|n| n.contains("still being built") && n.contains("passages")),
        "{:?}",
        got.notices
    );
    // The words came first; now the slow embedding holds the pass, and it says so.
    let progress = loop {
        match engine.status().progress {
            Some(p) if p.stage == "embedding" => break p,
            other => {
                assert!(std::time::Instant::now() < deadline, "no embedding stage: {other:?}");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    };
    assert!(progress.done < progress.total, "{progress:?}");
    assert_eq!(engine.phase(), Phase::Building);
    let coverage = engine.coverage(None).unwrap();
    assert_eq!(coverage.pass.as_ref().map(|p| p.stage.as_str()), Some("embedding"));
    assert!(mdvault::index::coverage::render(&coverage).contains("texts embedded"));
}

#[test]
fn a_full_pass_reuses_every_stored_vector_and_re_embed_replaces_them_all() {
    let f = indexed_fixture();
    let texts = f.engine.index().store().distinct_texts().unwrap() as usize;
    assert!(texts > 10, "the fixture has {texts} texts");

    // --full re-chunks every file, and every text finds its vector by hash.
    let full = f.engine.sync(None, true, &Silent).unwrap();
    assert!(full[0].1.files_chunked > 0);
    assert_eq!(full[0].1.texts_embedded, 0, "a full pass embedded texts that had vectors");
    assert_eq!(full[0].1.texts_reused, texts);

    // --re-embed embeds every text again, and search still works on the new vectors.
    let again = f.engine.pass(None, mdvault::index::Pass::ReEmbed, &Silent).unwrap();
    assert_eq!((again[0].1.texts_embedded, again[0].1.texts_reused), (texts, 0));
    let (chunks, vectors) = f.engine.index().counts();
    assert_eq!(chunks, vectors, "every chunk has a vector after a re-embed");
    assert!(!top(&f.engine, "boiler pressure", 3).is_empty());
}

#[test]
fn a_misspelt_word_in_a_short_query_is_searched_as_the_word_one_edit_away_and_the_answer_says_so() {
    let f = shared();
    let mut req = SearchRequest::new("brodband contract");
    req.k = Some(6);
    req.mode = mdvault::search::Mode::Lexical;
    let got = f.engine.search(&req).unwrap();
    assert_eq!(
        got.results.first().map(|h| h.path.as_str()),
        Some("Home/Utilities/Broadband.md"),
        "{:?}",
        got.results.iter().map(|h| &h.path).collect::<Vec<_>>()
    );
    let said =
        "no passage has the word \u{201c}brodband\u{201d}; passages with \u{201c}broadband\u{201d}";
    assert!(got.notices.iter().any(|n| n.starts_with(said)), "{:?}", got.notices);
    // A question is taken as written: a word the vault lacks ("fund") is no typo of one it
    // has ("find").
    let mut req = SearchRequest::new("Where is our emergency fund kept and how big should it be?");
    req.mode = mdvault::search::Mode::Lexical;
    assert!(f.engine.search(&req).unwrap().notices.is_empty());
    // A word the vault has is searched as it is, with nothing said.
    let mut req = SearchRequest::new("broadband contract");
    req.mode = mdvault::search::Mode::Lexical;
    assert!(f.engine.search(&req).unwrap().notices.is_empty());
}
