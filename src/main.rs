//! The `mdvault` binary: everything lives in the library; see `mdvault::cli`.

// mimalloc: the embedder allocates large per-batch activation buffers over and over, and
// glibc's allocator maps and faults them in afresh each time; mimalloc reuses them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    mdvault::cli::main()
}
