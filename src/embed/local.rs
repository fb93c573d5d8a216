//! The in-process embedder: a BERT sentence model (all-MiniLM-L6-v2 by default) run with candle.
//!
//! It loads `config.json`, `tokenizer.json` and `model.safetensors` from one folder, runs the
//! encoder on the CPU in f32, mean-pools over real tokens and L2-normalises. It never contacts a
//! model hub: a missing or broken folder is [`EmbedError::ModelFiles`] with the install command.
//! Parallelism comes from candle's own rayon pool; this module starts no threads. The global
//! allocator (mimalloc) is the binaries' business, not this library's.

use std::fs::File;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::utils::padding::pad_encodings;
use tokenizers::{Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, l2_normalise};

/// The model's `max_seq_length`: longer texts are cut to this many tokens, specials included.
const MAX_TOKENS: usize = 256;

/// Texts per forward pass. Measured on 2 cores: 8 to 16 is fastest; larger batches lose to the
/// size of the attention temporaries.
const BATCH: usize = 8;

/// The files a model folder must hold.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Embedded rows tagged with their input position.
type Rows = Vec<(usize, Vec<f32>)>;

/// A BERT sentence-embedding model loaded from a local folder.
pub struct LocalEmbedder {
    // Boxed so that `Embedder::Local` stays about as small as `Embedder::Http`.
    model: Box<BertModel>,
    tokenizer: Box<Tokenizer>,
    padding: PaddingParams,
    dims: usize,
    model_id: String,
    /// One single-threaded rayon pool per worker; see [`LocalEmbedder::embed`].
    pools: Vec<rayon::ThreadPool>,
}

impl LocalEmbedder {
    /// Loads the model in `model_dir`, checking that every file is there and usable.
    pub fn load(model_dir: &Path) -> Result<LocalEmbedder, EmbedError> {
        let bad = |reason: String| EmbedError::ModelFiles { dir: model_dir.to_path_buf(), reason };
        if !model_dir.is_dir() {
            return Err(bad("the folder does not exist".into()));
        }
        for name in FILES {
            if !model_dir.join(name).is_file() {
                return Err(bad(format!("`{name}` is missing")));
            }
        }

        let config_text = std::fs::read_to_string(model_dir.join("config.json"))
            .map_err(|e| bad(format!("`config.json` cannot be read: {e}")))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| bad(format!("`config.json` is not a BERT config: {e}")))?;

        let mut tokenizer = Tokenizer::from_file(model_dir.join("tokenizer.json"))
            .map_err(|e| bad(format!("`tokenizer.json` cannot be parsed: {e}")))?;
        // The shipped tokenizer.json pads every text to a fixed 128 and truncates at 128. Padding
        // is done per batch below (to the batch's longest text), and truncation follows the
        // model's max_seq_length, which is what the reference vectors were made with.
        let padding = match tokenizer.get_padding() {
            Some(p) => PaddingParams {
                strategy: PaddingStrategy::BatchLongest,
                pad_to_multiple_of: None,
                ..p.clone()
            },
            None => {
                PaddingParams { pad_id: config.pad_token_id as u32, ..PaddingParams::default() }
            }
        };
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(format!("`tokenizer.json` refuses truncation: {e}")))?;

        let weights = model_dir.join("model.safetensors");
        let digest = sha256_file(&weights)
            .map_err(|e| bad(format!("`model.safetensors` cannot be read: {e}")))?;
        // SAFETY: the weights are mapped read-only. A file replaced by an atomic rename (as the
        // fetch script does) leaves this mapping on the old inode; only truncating the file in
        // place while the server runs could fault, and nothing in mdvault writes model files.
        let vb =
            unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
                .map_err(|e| bad(format!("`model.safetensors` is not a safetensors file: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| {
            bad(format!(
                "`model.safetensors` does not hold the weights `config.json` describes: {e}"
            ))
        })?;

        let folder = std::fs::canonicalize(model_dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".to_string());
        let model_id = format!("local:{folder}@{}", &digest[..12]);

        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let pools = (0..cores)
            .map(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| EmbedError::Other(format!("cannot start embedding workers: {e}")))?;
        Ok(LocalEmbedder {
            model: Box::new(model),
            tokenizer: Box::new(tokenizer),
            padding,
            dims: config.hidden_size,
            model_id,
            pools,
        })
    }

    /// The width of every vector (the model's hidden size; 384 for MiniLM).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// `local:<folder name>@<first 12 hex of sha256(model.safetensors)>`.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Embeds texts; rows are unit length and in input order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Other(format!("tokenising failed: {e}")))?;

        // Batching texts of similar length keeps padding, and so wasted attention work, small.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut encodings: Vec<Option<Encoding>> = encodings.into_iter().map(Some).collect();

        let batches: Vec<(Vec<usize>, Vec<Encoding>)> = order
            .chunks(BATCH)
            .map(|positions| {
                let batch = positions.iter().filter_map(|&i| encodings[i].take()).collect();
                (positions.to_vec(), batch)
            })
            .collect();
        // One batch (a query, an edit) runs with every core inside each matrix product. Several
        // batches run side by side instead, one core each: candle's element-wise steps (GELU,
        // softmax, layer norm) are single-threaded, so parallel batches keep both cores busy
        // where parallel matrix products leave one idle (measured: +20-25% chunks/s on 2 cores).
        let workers = self.pools.len().min(batches.len());
        let mut out = vec![Vec::new(); texts.len()];
        if workers <= 1 {
            for (positions, mut batch) in batches {
                let rows = self.forward(&mut batch)?;
                for (&i, row) in positions.iter().zip(rows) {
                    out[i] = row;
                }
            }
            return Ok(out);
        }
        let queue = std::sync::Mutex::new(batches.into_iter());
        let results: Vec<Result<Rows, EmbedError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (queue, pool) = (&queue, &self.pools[w]);
                    scope.spawn(move || {
                        pool.install(|| {
                            let mut done = Vec::new();
                            loop {
                                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                                let Some((positions, mut batch)) = next else { break };
                                let rows = self.forward(&mut batch)?;
                                done.extend(positions.into_iter().zip(rows));
                            }
                            Ok(done)
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmbedError::Other("an embedding worker panicked".into()))
                    })
                })
                .collect()
        });
        for r in results {
            for (i, row) in r? {
                out[i] = row;
            }
        }
        Ok(out)
    }

    /// Pads one batch, runs the encoder and mean-pools each text over its real tokens.
    fn forward(&self, batch: &mut [Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        pad_encodings(batch, &self.padding)
            .map_err(|e| EmbedError::Other(format!("padding a batch failed: {e}")))?;
        let rows = batch.len();
        let len = batch.first().map_or(0, |e| e.len());
        let flat = |field: fn(&Encoding) -> &[u32]| -> Vec<u32> {
            batch.iter().flat_map(|e| field(e).iter().copied()).collect()
        };
        let device = &self.model.device;
        let ids = Tensor::from_vec(flat(Encoding::get_ids), (rows, len), device).map_err(tensor)?;
        let types =
            Tensor::from_vec(flat(Encoding::get_type_ids), (rows, len), device).map_err(tensor)?;
        let mask = Tensor::from_vec(flat(Encoding::get_attention_mask), (rows, len), device)
            .map_err(tensor)?;

        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(tensor)?;
        let weights = mask.to_dtype(DType::F32).and_then(|m| m.unsqueeze(2)).map_err(tensor)?;
        // Every row has at least [CLS] and [SEP], so the token count is never zero.
        let pooled = hidden
            .broadcast_mul(&weights)
            .and_then(|h| h.sum(1))
            .and_then(|sum| sum.broadcast_div(&weights.sum(1)?))
            .map_err(tensor)?;
        let mut vectors = pooled.to_vec2::<f32>().map_err(tensor)?;
        for v in &mut vectors {
            l2_normalise(v);
        }
        Ok(vectors)
    }
}

/// Wraps a candle failure; these mean a bug or exhausted memory, not bad input.
fn tensor(e: candle_core::Error) -> EmbedError {
    EmbedError::Other(format!("the model's forward pass failed: {e}"))
}

/// Lowercase hex sha256 of a file, streamed so the weights are never held twice in memory.
fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    std::io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
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

    fn embedder() -> &'static LocalEmbedder {
        static MODEL: OnceLock<LocalEmbedder> = OnceLock::new();
        MODEL.get_or_init(|| LocalEmbedder::load(&model_dir()).unwrap())
    }

    struct Golden {
        sha256: String,
        cosine_0_1: f32,
        items: Vec<(String, Vec<f32>)>,
    }

    /// The numpy reference vectors of the shared evaluation tools (not ours to commit):
    /// `../shared/eval/tools/minilm_golden.json`, or `MDVAULT_GOLDEN_VECTORS`.
    fn golden() -> Golden {
        let path = std::env::var_os("MDVAULT_GOLDEN_VECTORS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../shared/eval/tools/minilm_golden.json")
            });
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("cannot read the golden vectors {}: {e}", path.display());
        });
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
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
        assert_eq!(golden.items.len(), 4);
        for (text, want) in &golden.items {
            let got = embedder().embed(&[text]).unwrap();
            let cos = cosine(&got[0], want);
            assert!(cos >= 0.999, "cosine {cos} for {text:?}");
        }
    }

    #[test]
    fn matches_golden_vectors_as_one_padded_batch() {
        let golden = golden();
        let texts: Vec<&str> = golden.items.iter().map(|(t, _)| t.as_str()).collect();
        let got = embedder().embed(&texts).unwrap();
        assert_eq!(got.len(), texts.len());
        for ((text, want), row) in golden.items.iter().zip(&got) {
            let cos = cosine(row, want);
            assert!(cos >= 0.999, "cosine {cos} for {text:?} in a batch");
        }
        let between = dot(&got[0], &got[1]);
        assert!((between - golden.cosine_0_1).abs() < 1e-3, "cosine_0_1 {between}");
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
        std::fs::write(tmp.path().join("config.json"), "{not json").unwrap();
        std::fs::write(tmp.path().join("tokenizer.json"), "{}").unwrap();
        assert_eq!(model_files_reason(tmp.path()), "`model.safetensors` is missing");
        std::fs::write(tmp.path().join("model.safetensors"), "").unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`config.json` is not a BERT config"), "{reason}");
        let real = std::fs::read_to_string(model_dir().join("config.json")).unwrap();
        std::fs::write(tmp.path().join("config.json"), real).unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`tokenizer.json` cannot be parsed"), "{reason}");
        std::fs::copy(model_dir().join("tokenizer.json"), tmp.path().join("tokenizer.json"))
            .unwrap();
        let reason = model_files_reason(tmp.path());
        assert!(reason.starts_with("`model.safetensors` is not a safetensors file"), "{reason}");
    }

    #[test]
    fn parallel_batches_give_the_same_rows_in_input_order() {
        let model = embedder();
        let texts: Vec<String> = (0..21)
            .map(|i| {
                format!(
                    "Note {i}: {}",
                    "the boiler was serviced and the pressure checked ".repeat(1 + i % 5)
                )
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let together = model.embed(&refs).unwrap();
        for (i, text) in refs.iter().enumerate() {
            let alone = model.embed(&[text]).unwrap().remove(0);
            let cos: f32 = alone.iter().zip(&together[i]).map(|(a, b)| a * b).sum();
            assert!(cos > 0.9999, "row {i} differs (cos {cos})");
        }
    }
}
