//! The in-process embedder: a BERT sentence model (all-MiniLM-L6-v2 by default) loaded from a
//! local folder.
//!
//! It reads `config.json`, `tokenizer.json` and `model.safetensors` from one folder, tokenises
//! with `tokenizers` (truncating at the model's 256-token `max_seq_length`) and runs the forward
//! pass of [`super::bert`] on a rayon pool of its own, one thread per core (at most 8), at a
//! lower scheduling priority; a search's query runs on a one-thread pool of its own at the
//! normal priority, so it neither queues behind a batch of documents nor adds a core's worth of
//! threads to them (see [`LocalEmbedder::embed_queries`]). It never contacts a model hub: a
//! missing or broken folder is [`EmbedError::ModelFiles`] with the install command. The global
//! allocator (mimalloc) is the binaries' business, not this library's.

use std::path::Path;

use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::EmbedError;
use super::bert::{Encoder, Precision};

/// The environment variable that picks the encoder's arithmetic: `auto` (the default: bf16 on
/// AMX tiles where the CPU and Linux allow them, else int8 with AVX-512 VNNI, else bf16 with
/// AVX-512 BF16, else f32; see `Precision::fastest`), `amx`, `bf16`, `int8` or `f32`.
/// `f32` is the reference and what to set to rule the low-precision kernels out.
pub(crate) const PRECISION_ENV: &str = "MDVAULT_ENCODER";

/// The model's `max_seq_length`: longer texts are cut to this many tokens, specials included.
/// The reference vectors of sentence-transformers are made with the same cut.
const MAX_TOKENS: usize = 256;

/// Ordinary text of several kinds (prose, a list, code, a question, figures) that the int8
/// encoder runs once through the f32 one at load, to find each layer's outsized activation
/// channels (see `super::lowp::smoothing`). Those channels are a property of the model more
/// than of the text, so a few varied paragraphs find them; more text only adds load time.
const CALIBRATION: [&str; 6] = [
    "The meeting moved to Thursday afternoon because half of the team was travelling. We agreed \
     to keep the notes short, to write down every decision with its reason, and to review the \
     open questions before the next release.",
    "# Garden plan\n\n- tomatoes along the south fence\n- beans and peas in the raised bed\n- \
     water every second morning in July\n- compost from the kitchen bin goes under the apple tree",
    "fn main() { let total: u64 = (1..=10).map(|n| n * n).sum(); println!(\"{total}\"); } // \
     prints 385; see the README for build steps and `cargo test` for the checks",
    "How do I reset my password if I no longer have access to the email address on the account?",
    "Invoice 2024-117: 3 licences at 49.00 EUR, shipping 12.50, VAT 19 %, due 30 days after \
     receipt. Contact accounts@example.org with the reference number.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen; the reaction \
     happens in the chloroplasts, and its rate depends on temperature and light intensity.",
];

/// The files a model folder must hold.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// A BERT sentence-embedding model loaded from a local folder.
pub struct LocalEmbedder {
    // Boxed so that `Embedder::Local` stays about as small as `Embedder::Http`.
    encoder: Box<Encoder>,
    tokenizer: Box<Tokenizer>,
    model_id: String,
    /// The threads every forward pass runs on. A pool of our own rather than rayon's global one,
    /// so that the embedder's thread count is its own decision and other rayon users (tantivy's
    /// merges, say) never queue behind a long indexing batch.
    pool: rayon::ThreadPool,
    /// The one thread queries run on (see [`LocalEmbedder::embed_queries`]).
    query_pool: rayon::ThreadPool,
}

/// The scheduling niceness of the document threads: the usual one for background work, so
/// the server's own threads and a search's query run first when both want a core.
const DOCUMENT_NICENESS: libc::c_int = 10;

/// Lowers the calling thread's priority to [`DOCUMENT_NICENESS`]. On Linux the nice value is
/// a thread's own (setpriority(2)), so this leaves the rest of the process alone; where it
/// fails (a sandbox refusing it), the threads run at the normal priority, as before.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        // SAFETY: setpriority only reads its integer arguments; `tid` is this thread's id.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, DOCUMENT_NICENESS) };
    }
}

impl LocalEmbedder {
    /// Loads the model in `model_dir`, checking that every file is there and usable, with the
    /// encoder precision [`PRECISION_ENV`] names (`auto` when unset).
    pub fn load(model_dir: &Path) -> Result<LocalEmbedder, EmbedError> {
        let setting = std::env::var(PRECISION_ENV).unwrap_or_default();
        LocalEmbedder::load_with(model_dir, &setting)
    }

    /// [`LocalEmbedder::load`] with the precision setting given (`auto`, `amx`, `int8`, `bf16`,
    /// `f32`).
    pub(crate) fn load_with(
        model_dir: &Path,
        precision: &str,
    ) -> Result<LocalEmbedder, EmbedError> {
        let precision = Precision::parse(precision)
            .map_err(|e| EmbedError::Other(format!("{e} (set by {PRECISION_ENV})")))?;
        let bad = |reason: String| EmbedError::ModelFiles { dir: model_dir.to_path_buf(), reason };
        if !model_dir.is_dir() {
            return Err(bad("the folder does not exist".into()));
        }
        for name in FILES {
            if !model_dir.join(name).is_file() {
                return Err(bad(format!("`{name}` is missing")));
            }
        }
        let config = std::fs::read_to_string(model_dir.join("config.json"))
            .map_err(|e| bad(format!("`config.json` cannot be read: {e}")))?;
        let weights = std::fs::read(model_dir.join("model.safetensors"))
            .map_err(|e| bad(format!("`model.safetensors` cannot be read: {e}")))?;
        // The tokenizer is read before the encoder is built (int8 calibrates on tokenised text),
        // but its errors are reported after the encoder's, as they always were.
        let mut tokenizer = Tokenizer::from_file(model_dir.join("tokenizer.json"));
        // The shipped tokenizer.json pads every text to a fixed 128 and truncates at 128. The
        // encoder needs no padding at all, and truncation follows the model's max_seq_length.
        if let Ok(t) = &mut tokenizer {
            t.with_padding(None);
        }
        let calibration = match (&tokenizer, precision) {
            (Ok(t), Precision::Int8) => t
                .encode_batch(CALIBRATION.to_vec(), true)
                .map_err(|e| bad(format!("`tokenizer.json` cannot tokenise: {e}")))?,
            _ => Vec::new(),
        };
        let calibration: Vec<&[u32]> = calibration.iter().map(|e| e.get_ids()).collect();
        // The weights' digest (90 MB of SHA-256, about 40 ms) is taken on a second thread while
        // the encoder is built from the same bytes: a one-shot `mdvault search` pays the longer
        // of the two, not their sum.
        let (encoder, digest) = std::thread::scope(|s| {
            let digest = s.spawn(|| Sha256::digest(&weights));
            let encoder = Encoder::new(&config, &weights, precision, &calibration);
            (encoder, digest.join())
        });
        let encoder = encoder.map_err(bad)?;
        let digest = digest.map_err(|_| bad("the weights' digest failed".into()))?;
        let digest: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        drop(weights);

        let mut tokenizer =
            tokenizer.map_err(|e| bad(format!("`tokenizer.json` cannot be parsed: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(encoder.max_tokens()),
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(format!("`tokenizer.json` refuses truncation: {e}")))?;
        // The encoder treats an id outside its vocabulary as a bug (it panics), so a mismatched
        // tokenizer is refused here rather than on the first unusual text.
        let tokens = tokenizer.get_vocab_size(true);
        if tokens > encoder.vocab() {
            return Err(bad(format!(
                "`tokenizer.json` has {tokens} tokens but the model's vocabulary holds only {}",
                encoder.vocab()
            )));
        }

        let model_id = id_for(model_dir, &digest);

        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(cores)
            .thread_name(|n| format!("mdvault-embed-{n}"))
            .start_handler(|_| lower_priority())
            .build()
            .map_err(|e| EmbedError::Other(format!("cannot start embedding workers: {e}")))?;
        let query_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "mdvault-query".to_string())
            .build()
            .map_err(|e| EmbedError::Other(format!("cannot start the query worker: {e}")))?;
        Ok(LocalEmbedder {
            encoder: Box::new(encoder),
            tokenizer: Box::new(tokenizer),
            model_id,
            pool,
            query_pool,
        })
    }

    /// The width of every vector (the model's hidden size; 384 for MiniLM).
    pub(crate) fn dims(&self) -> usize {
        self.encoder.hidden()
    }

    /// The encoder's arithmetic, as chosen at load: `amx`, `int8`, `bf16` or `f32`, and
    /// `int8-f32-attention` for int8 on a CPU without AVX-512 BF16 (Ice Lake, Cascade Lake),
    /// whose attention stays f32: its ranks differ from int8's with bf16 attention, and
    /// `eval` keeps a baseline per name.
    pub(crate) fn precision(&self) -> &'static str {
        match (self.encoder.precision(), self.encoder.attention_unit()) {
            (Precision::F32, _) => "f32",
            (Precision::Int8, Some(_)) => "int8",
            (Precision::Int8, None) => "int8-f32-attention",
            (Precision::Bf16, _) => "bf16",
            (Precision::Amx, _) => "amx",
        }
    }

    /// The tile unit's measured peak and the dense kernel's rate on this model's product
    /// shapes, for `bench` (about a second); `None` unless the encoder runs on AMX tiles.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn tile_rate(&self) -> Option<super::TileRate> {
        if self.encoder.precision() != Precision::Amx {
            return None;
        }
        super::amx::rate::measure(&self.encoder.product_shapes())
    }

    /// The floating-point operations the encoder spends on `texts` as it embeds them
    /// (tokenised and cut as [`LocalEmbedder::embed`] cuts them; see `Encoder::flops`).
    pub(crate) fn flops(&self, texts: &[&str]) -> Result<f64, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Other(format!("tokenising failed: {e}")))?;
        Ok(encodings.iter().map(|e| self.encoder.flops(e.get_ids().len())).sum())
    }

    /// `local:<folder name>@<first 12 hex of sha256(model.safetensors)>`.
    pub(crate) fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The [`LocalEmbedder::model_id`] the model in `model_dir` would have, without loading
    /// it: hashes the weights only (`mdvault status` uses it to see a pending model switch).
    pub(crate) fn identify(model_dir: &Path) -> Result<String, EmbedError> {
        let bad = |reason: String| EmbedError::ModelFiles { dir: model_dir.to_path_buf(), reason };
        let mut file = std::fs::File::open(model_dir.join("model.safetensors"))
            .map_err(|e| bad(format!("`model.safetensors` cannot be read: {e}")))?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher)
            .map_err(|e| bad(format!("`model.safetensors` cannot be read: {e}")))?;
        let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(id_for(model_dir, &digest))
    }

    /// Embeds texts; rows are unit length and in input order.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_on(&self.pool, texts)
    }

    /// Embeds search queries (one per search) on the query thread.
    ///
    /// On the documents' pool a query waited until every task of the batch under way was
    /// done (rayon runs a job sent from outside only after its workers' own queues are
    /// empty): seconds while an index was being built (`bench --load --while-building`). A
    /// query is a few dozen tokens, which one thread embeds in about a millisecond, so it gets
    /// one thread of its own, and the document threads' lower priority leaves it a core.
    pub(crate) fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_on(&self.query_pool, texts)
    }

    fn embed_on(
        &self,
        pool: &rayon::ThreadPool,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Tokenising runs on the same pool: `encode_batch` parallelises with rayon too.
        pool.install(|| {
            let encodings = self
                .tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| EmbedError::Other(format!("tokenising failed: {e}")))?;
            let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
            Ok(self.encoder.encode(&ids))
        })
    }
}

/// `local:<folder name>@<first 12 hex digits of the weights' SHA-256>`. The folder is named
/// after following links, so a `current` symlink names the model it points at.
fn id_for(model_dir: &Path, digest: &str) -> String {
    let folder = std::fs::canonicalize(model_dir)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "model".to_string());
    format!("local:{folder}@{}", &digest[..12])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::OnceLock;

    /// The installed model folder; a missing one fails the test with the fix.
    fn model_dir() -> PathBuf {
        let dir = match std::env::var_os("MDVAULT_MODEL_DIR") {
            Some(d) => PathBuf::from(d),
            None => {
                let home = std::env::var_os("HOME").expect("HOME is not set");
                PathBuf::from(home).join(".local/share/mdvault/models/all-MiniLM-L6-v2")
            }
        };
        assert!(
            dir.join("model.safetensors").is_file(),
            "the embedding model is not installed in {}: run scripts/fetch-model.sh \
             (or set MDVAULT_MODEL_DIR to a folder holding all-MiniLM-L6-v2)",
            dir.display()
        );
        dir
    }

    /// The model with the f32 encoder: the reference every other precision is held to.
    /// The int8 encoder's least cosine to the reference. It does not reach the 0.999 bf16 keeps
    /// (measured: 0.9876 for the empty text, whose two special tokens quantise worst; 0.9989
    /// for "kettle"; 0.9959 at worst over the docs' paragraphs); `auto` runs it where tiles are
    /// missing all the same, because rankings do not see the difference (`Precision::fastest`).
    const INT8_COSINE: f32 = 0.985;

    fn embedder() -> &'static LocalEmbedder {
        static MODEL: OnceLock<LocalEmbedder> = OnceLock::new();
        MODEL.get_or_init(|| LocalEmbedder::load_with(&model_dir(), "f32").unwrap())
    }

    /// Every encoder precision this CPU runs, with the least cosine each must keep to the
    /// reference vectors. f32 is exact arithmetic, so far more than the 0.999 holds and
    /// a slip in a kernel shows long before it would in rankings; the low precisions are held
    /// to what they were measured to keep on the golden texts, with a margin (bf16 stays above
    /// 0.9999 on them).
    fn every_precision() -> Vec<(&'static LocalEmbedder, f32)> {
        static BF16: OnceLock<Option<LocalEmbedder>> = OnceLock::new();
        static AMX: OnceLock<Option<LocalEmbedder>> = OnceLock::new();
        static INT8: OnceLock<Option<LocalEmbedder>> = OnceLock::new();
        let load = |p: &str| LocalEmbedder::load_with(&model_dir(), p).ok();
        let mut all = vec![(embedder(), 0.99999)];
        all.extend(BF16.get_or_init(|| load("bf16")).as_ref().map(|m| (m, 0.9999)));
        all.extend(AMX.get_or_init(|| load("amx")).as_ref().map(|m| (m, 0.9999)));
        all.extend(INT8.get_or_init(|| load("int8")).as_ref().map(|m| (m, INT8_COSINE)));
        all
    }

    struct Golden {
        sha256: String,
        cosine_0_1: f32,
        items: Vec<(String, Vec<f32>)>,
    }

    /// The committed reference vectors, made by sentence-transformers with
    /// `scripts/golden-vectors.py`.
    fn committed_golden() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm_golden.json")
    }

    fn read_json(path: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("cannot read the golden vectors {}: {e}", path.display());
        });
        serde_json::from_str(&text).unwrap()
    }

    /// The reference vectors the embedder must reproduce: the committed ones, or any file of
    /// the same shape named by `MDVAULT_GOLDEN_VECTORS` (to compare against another reference).
    fn golden() -> Golden {
        let path = std::env::var_os("MDVAULT_GOLDEN_VECTORS")
            .map(PathBuf::from)
            .unwrap_or_else(committed_golden);
        let json = read_json(&path);
        let floats = |v: &serde_json::Value| -> Vec<f32> {
            v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
        };
        Golden {
            sha256: json["model_safetensors_sha256"].as_str().unwrap().to_string(),
            cosine_0_1: json["cosine_0_1"].as_f64().unwrap() as f32,
            items: json["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|it| (it["text"].as_str().unwrap().to_string(), floats(&it["embedding"])))
                .collect(),
        }
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
    }

    #[test]
    fn is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<LocalEmbedder>();
    }

    #[test]
    fn matches_golden_vectors_one_at_a_time() {
        let golden = golden();
        assert!(golden.items.len() >= 2, "the golden file holds too few texts");
        for (model, least) in every_precision() {
            for (text, want) in &golden.items {
                let got = model.embed(&[text]).unwrap();
                let cos = cosine(&got[0], want);
                assert!(cos >= least, "{}: cosine {cos} for {text:?}", model.precision());
            }
        }
    }

    #[test]
    fn a_query_on_its_own_thread_matches_the_golden_vectors() {
        for (model, least) in every_precision() {
            for (text, want) in &golden().items {
                let got = model.embed_queries(&[text]).unwrap();
                let cos = cosine(&got[0], want);
                assert!(cos >= least, "{}: cosine {cos} for {text:?}", model.precision());
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn document_threads_run_at_a_lower_priority_and_the_query_thread_does_not() {
        let niceness = || {
            // SAFETY: gettid takes no arguments and cannot fail; getpriority only reads its
            // integer arguments (errno is not consulted: the values here are never -1).
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::getpriority(libc::PRIO_PROCESS, tid)
            }
        };
        let model = embedder();
        let here = niceness();
        let documents = model.pool.install(niceness);
        let query = model.query_pool.install(niceness);
        assert_eq!(query, here, "the query thread keeps the process's priority");
        // Lowering always succeeds for an unprivileged thread, unless it was already lower.
        assert_eq!(documents, DOCUMENT_NICENESS.max(here), "document threads are lowered");
    }

    #[test]
    fn matches_golden_vectors_as_one_batch() {
        let golden = golden();
        let texts: Vec<&str> = golden.items.iter().map(|(t, _)| t.as_str()).collect();
        for (model, least) in every_precision() {
            let got = model.embed(&texts).unwrap();
            assert_eq!(got.len(), texts.len());
            for ((text, want), row) in golden.items.iter().zip(&got) {
                let cos = cosine(row, want);
                let p = model.precision();
                assert!(cos >= least, "{p}: cosine {cos} for {text:?} in a batch");
            }
            let between = dot(&got[0], &got[1]);
            // Each vector may turn by up to acos(least); the cosine between two, about as much.
            let slack = 1e-3f32.max(2.0 * (1.0 - least));
            let p = model.precision();
            assert!((between - golden.cosine_0_1).abs() < slack, "{p}: cosine_0_1 {between}");
        }
    }

    #[test]
    fn the_committed_golden_vectors_come_from_the_pinned_model_and_cover_truncation() {
        let json = read_json(&committed_golden());
        for (name, pinned) in super::super::install::FILES {
            assert_eq!(json["model_files_sha256"][name], pinned, "{name}: re-run the script");
        }
        assert_eq!(json["max_seq_length"], MAX_TOKENS);
        // At least one text must run past the cut, or a truncation slip would go unseen.
        let items = json["items"].as_array().unwrap();
        let cut = items.iter().filter(|it| {
            it["tokens_before_truncation"].as_u64().unwrap() > MAX_TOKENS as u64
                && it["tokens"] == MAX_TOKENS
        });
        assert!(cut.count() >= 1, "no golden text is longer than {MAX_TOKENS} tokens");
    }

    #[test]
    fn keeps_input_order_across_lengths_and_batches() {
        let long = "A sentence that goes on for a while about indexing notes. ".repeat(40);
        let medium = "Mean pooling averages the token vectors of one text into one vector.";
        let texts: Vec<&str> = vec![
            &long,
            "cat",
            medium,
            "",
            "The boiler pressure should be 1.3 bar when cold.",
            "dog",
            &long[..200],
            "quarterly tax return deadline",
            "日本語のテキスト",
            "a kitten rests on a rug",
            "x",
        ];
        let batch = embedder().embed(&texts).unwrap();
        assert_eq!(batch.len(), texts.len());
        for (text, row) in texts.iter().zip(&batch) {
            let alone = &embedder().embed(&[text]).unwrap()[0];
            let cos = cosine(row, alone);
            assert!(cos > 0.9999, "row for {:?} differs from its single embedding: {cos}", text);
        }
        assert!(dot(&batch[1], &batch[5]) < 0.99, "distinct texts gave one vector");
    }

    #[test]
    fn rows_are_384_wide_and_unit_length() {
        let e = embedder();
        assert_eq!(e.dims(), 384);
        let rows = e.embed(&["one", "two words", "and a third, longer text"]).unwrap();
        for row in rows {
            assert_eq!(row.len(), 384);
            let norm = dot(&row, &row).sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
        }
    }

    #[test]
    fn empty_input_gives_empty_output() {
        assert!(embedder().embed(&[]).unwrap().is_empty());
    }

    #[test]
    fn model_id_names_folder_and_weights_hash() {
        let id = embedder().model_id();
        let folder = std::fs::canonicalize(model_dir()).unwrap();
        let folder = folder.file_name().unwrap().to_str().unwrap().to_string();
        let want = format!("local:{folder}@{}", &golden().sha256[..12]);
        assert_eq!(id, want);
        assert_eq!(LocalEmbedder::identify(&model_dir()).unwrap(), want, "same id unloaded");
        let via_enum = super::super::Embedder::Local(LocalEmbedder::load(&model_dir()).unwrap());
        assert_eq!(via_enum.model_id(), want);
        assert_eq!(via_enum.dims(), 384);
    }

    fn model_files_reason(dir: &Path) -> String {
        match LocalEmbedder::load(dir) {
            Err(EmbedError::ModelFiles { dir: named, reason }) => {
                assert_eq!(named, dir);
                reason
            }
            Err(other) => panic!("expected ModelFiles, got {other}"),
            Ok(_) => panic!("loaded a model from {}", dir.display()),
        }
    }

    #[test]
    fn missing_folder_is_model_files_with_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("nope");
        assert_eq!(model_files_reason(&dir), "the folder does not exist");
        let msg = LocalEmbedder::load(&dir).err().unwrap().to_string();
        assert!(msg.contains(&dir.display().to_string()), "{msg}");
        assert!(msg.contains("scripts/fetch-model.sh"), "{msg}");
    }

    #[test]
    fn missing_file_and_bad_config_are_model_files() {
        let tmp = tempfile::tempdir().unwrap();
        let real = model_dir();
        std::fs::write(tmp.path().join("config.json"), "{not json").unwrap();
        std::fs::write(tmp.path().join("tokenizer.json"), "{}").unwrap();
        assert_eq!(model_files_reason(tmp.path()), "`model.safetensors` is missing");
        std::fs::write(tmp.path().join("model.safetensors"), "").unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`config.json` is not a BERT config"), "{reason}");
        std::fs::copy(real.join("config.json"), tmp.path().join("config.json")).unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`model.safetensors` is not a safetensors file"), "{reason}");
        std::fs::remove_file(tmp.path().join("model.safetensors")).unwrap();
        std::os::unix::fs::symlink(
            real.join("model.safetensors"),
            tmp.path().join("model.safetensors"),
        )
        .unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`tokenizer.json` cannot be parsed"), "{reason}");
    }

    #[test]
    fn parallel_batches_give_the_same_rows_in_input_order() {
        let model = embedder();
        let texts: Vec<String> = (0..21)
            .map(|i| {
                format!(
                    "Note {i}: {}",
                    // About 2,700 tokens in all: enough for whole batches per thread.
                    "the boiler was serviced and the pressure checked ".repeat(6 + 4 * (i % 5))
                )
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let together = model.embed(&refs).unwrap();
        for (i, text) in refs.iter().enumerate() {
            let alone = model.embed(&[text]).unwrap().remove(0);
            let cos: f32 = alone.iter().zip(&together[i]).map(|(a, b)| a * b).sum();
            assert!(cos > 0.99999, "row {i} differs (cos {cos})");
        }
    }
}
