//! Reading a Hugging Face BERT checkpoint (`config.json` and `model.safetensors`) into the
//! encoder's layout: the sizes checked, each tensor checked against them, and each layer's
//! dense weights packed for the chosen precision.

use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::{Dims, Layer, Linear, Precision};

/// The parts of a Hugging Face BERT `config.json` the forward pass depends on.
#[derive(Debug, Deserialize)]
pub(super) struct Config {
    pub(super) hidden_size: usize,
    pub(super) num_attention_heads: usize,
    pub(super) num_hidden_layers: usize,
    pub(super) intermediate_size: usize,
    pub(super) max_position_embeddings: usize,
    pub(super) vocab_size: usize,
    #[serde(default = "default_type_vocab")]
    pub(super) type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub(super) layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub(super) hidden_act: String,
    #[serde(default)]
    pub(super) position_embedding_type: Option<String>,
}

fn default_type_vocab() -> usize {
    2
}

fn default_eps() -> f64 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

impl Dims {
    /// The sizes `config.json` gives, refused where this encoder cannot run them.
    pub(super) fn of(c: &Config) -> Result<Dims, String> {
        if c.hidden_act != "gelu" {
            return Err(format!(
                "`config.json`: hidden_act {:?} is not supported (only \"gelu\", the exact-erf one)",
                c.hidden_act
            ));
        }
        if let Some(p) = &c.position_embedding_type
            && p != "absolute"
        {
            return Err(format!("`config.json`: position_embedding_type {p:?} is not supported"));
        }
        if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
            return Err(format!(
                "`config.json`: hidden_size {} is not a multiple of num_attention_heads {}",
                c.hidden_size, c.num_attention_heads
            ));
        }
        if c.type_vocab_size == 0 {
            return Err("`config.json`: type_vocab_size is 0".into());
        }
        Ok(Dims {
            hidden: c.hidden_size,
            heads: c.num_attention_heads,
            head_dim: c.hidden_size / c.num_attention_heads,
            inter: c.intermediate_size,
            max_pos: c.max_position_embeddings,
            vocab: c.vocab_size,
            eps: c.layer_norm_eps as f32,
        })
    }
}

/// `model.safetensors`, read tensor by tensor.
pub(super) struct Tensors<'a> {
    pub(super) st: SafeTensors<'a>,
    /// Checkpoints saved from `BertModel` have bare names; ones from a task model, `bert.`.
    pub(super) prefix: &'static str,
}

impl<'a> Tensors<'a> {
    pub(super) fn read(bytes: &'a [u8]) -> Result<Tensors<'a>, String> {
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| format!("`model.safetensors` is not a safetensors file: {e}"))?;
        let prefix =
            if st.names().contains(&"embeddings.word_embeddings.weight") { "" } else { "bert." };
        Ok(Tensors { st, prefix })
    }

    /// One F32 tensor of the shape `config.json` implies, as little-endian floats.
    pub(super) fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let view = self.st.tensor(&full).map_err(|_| {
            format!("`model.safetensors` has no tensor `{full}` (is this a BERT model?)")
        })?;
        if view.shape() != shape {
            return Err(format!(
                "`model.safetensors`: `{full}` has shape {:?}, but `config.json` implies \
                 {shape:?}",
                view.shape()
            ));
        }
        if view.dtype() != Dtype::F32 {
            return Err(format!(
                "`model.safetensors`: `{full}` is {:?}; only F32 weights are supported",
                view.dtype()
            ));
        }
        Ok(view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

impl Layer {
    /// Encoder layer `l`, its dense layers packed for `precision`; `act` is the layer's
    /// calibrated activation maxima (qkv, out, up, down) for int8.
    pub(super) fn read(
        t: &Tensors,
        l: usize,
        d: Dims,
        precision: Precision,
        act: Option<&[Vec<f32>; 4]>,
    ) -> Result<Layer, String> {
        let (h, i) = (d.hidden, d.inter);
        // Folding the scale into Q changes one rounding per weight (none when head_dim is a
        // power of 4); the cosine to the reference stays at 1 - 1e-7.
        let scale = 1.0 / (d.head_dim as f32).sqrt();
        let p = format!("encoder.layer.{l}.");
        let w = |name: &str, n_out: usize, n_in: usize| {
            Ok::<_, String>((
                t.get(&format!("{p}{name}.weight"), &[n_out, n_in])?,
                t.get(&format!("{p}{name}.bias"), &[n_out])?,
            ))
        };
        let lin = |name: &str, n_in: usize, n_out: usize, j: usize| {
            let (w, b) = w(name, n_out, n_in)?;
            Ok::<_, String>(Linear::from_torch(
                &w,
                b,
                n_in,
                n_out,
                precision,
                act.map(|a| &a[j][..]),
            ))
        };
        let (mut qkv_w, mut qkv_b) = w("attention.self.query", h, h)?;
        qkv_w.iter_mut().chain(qkv_b.iter_mut()).for_each(|x| *x *= scale);
        for name in ["attention.self.key", "attention.self.value"] {
            let (w, b) = w(name, h, h)?;
            qkv_w.extend(w);
            qkv_b.extend(b);
        }
        let ln = |name: &str| {
            Ok::<_, String>((
                t.get(&format!("{p}{name}.weight"), &[h])?,
                t.get(&format!("{p}{name}.bias"), &[h])?,
            ))
        };
        let (ln1_g, ln1_b) = ln("attention.output.LayerNorm")?;
        let (ln2_g, ln2_b) = ln("output.LayerNorm")?;
        Ok(Layer {
            qkv: Linear::from_torch(&qkv_w, qkv_b, h, 3 * h, precision, act.map(|a| &a[0][..])),
            out: lin("attention.output.dense", h, h, 1)?,
            ln1_g,
            ln1_b,
            up: lin("intermediate.dense", h, i, 2)?,
            down: lin("output.dense", i, h, 3)?,
            ln2_g,
            ln2_b,
        })
    }
}
