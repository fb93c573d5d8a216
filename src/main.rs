//! The `mdvault` binary: everything lives in the library; see `mdvault::cli`.

// mimalloc: the embedder allocates large per-batch activation buffers over and over, and
// glibc's allocator maps and faults them in afresh each time; mimalloc reuses them. Built
// without asking for transparent huge pages (the `no_thp` feature): each first touch of one
// zeroes 2 MiB and may compact memory under the fault, which made a warm start at a million
// chunks take 0.7 s or 1.7 s by chance (kernel time 0.14-1.14 s against a steady 0.21-0.26 s
// without), and the embedder's rate did not change.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    mdvault::cli::main()
}
