//! `bench`'s cold-cache figures at a scale point: the index's files are evicted from the page
//! cache, then an index opened afresh answers its first searches.
//!
//! Dropping the whole page cache (`/proc/sys/vm/drop_caches`) needs root, and would also take
//! the machine's other work's files; so this evicts only the data directory's files, each with
//! `posix_fadvise(DONTNEED)`, which any user may ask of a file they can read. The kernel keeps
//! pages that are dirty or still mapped, so the figures say how much of the files was resident
//! before and after (`mincore`), and the run is only as cold as that says. Nothing may map
//! them meanwhile: the scale point's engine is dropped before, and the warm-start probes have
//! exited.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::Failure;
use super::bench::{Corpus, fail, ms, percentile};
use crate::config::Config;
use crate::embed::hashing::HashingEmbedder;
use crate::engine::Engine;
use crate::search::SearchRequest;
use crate::wire::BenchCold;

/// Searches timed after the eviction: the "first searches" issue 37's target speaks of.
const SEARCHES: usize = 20;

/// Evicts the index's files under `data`, opens an index over them with the hashing embedder
/// of `dims`, and times its open and its first [`SEARCHES`] hybrid searches (query vectors
/// made beforehand, so the figures are the index's reads and arithmetic).
pub(super) fn measure(cfg: &Config, data: &Path, dims: usize) -> Result<BenchCold, Failure> {
    let files = index_files(data);
    let (bytes, before) = resident_total(&files);
    for f in &files {
        evict(f).map_err(|e| fail(format!("cannot evict {}: {e}", f.display())))?;
    }
    let (_, after) = resident_total(&files);
    let embedder = HashingEmbedder::new(dims);
    let mut corpus = Corpus::new();
    let queries: Vec<(String, Vec<f32>)> = (0..SEARCHES)
        .map(|_| {
            let q = corpus.query();
            let v = embedder.embed(&[q.as_str()]).swap_remove(0);
            (q, v)
        })
        .collect();
    let t = Instant::now();
    let engine = Engine::with_embedder(
        cfg.clone(),
        crate::embed::Embedder::Hashing(HashingEmbedder::new(dims)),
    )?;
    let open_ms = ms(t.elapsed());
    let mut times = Vec::new();
    for (q, v) in queries {
        let mut req = SearchRequest::new(&q);
        req.query_vector = Some(v);
        let t = Instant::now();
        engine.search(&req)?;
        times.push(ms(t.elapsed()));
    }
    let first_ms = times[0];
    times.sort_by(f64::total_cmp);
    Ok(BenchCold {
        bytes,
        resident_before: before,
        resident_after: after,
        open_ms,
        first_ms,
        p50_ms: percentile(&times, 0.5),
        p95_ms: percentile(&times, 0.95),
        searches: SEARCHES,
    })
}

/// The figures as a line.
pub(super) fn line(chunks: usize, c: &BenchCold) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    format!(
        "{chunks:>7} chunks: cold cache (the index's {:.0} MiB of files evicted: {:.0} MiB \
         resident before, {:.0} MiB after): open {:.0} ms, first search {:.1} ms, first {} \
         searches p50 {:.1} ms / p95 {:.1} ms{}",
        mib(c.bytes),
        mib(c.resident_before),
        mib(c.resident_after),
        c.open_ms,
        c.first_ms,
        c.searches,
        c.p50_ms,
        c.p95_ms,
        super::scan::target(chunks, "p50 ≤ 40 ms")
    )
}

/// Every regular file below `data` but its models (not the index's, and shared).
fn index_files(data: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(data)
        .into_iter()
        .filter_entry(|e| e.file_name() != "models")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

/// The files' total bytes, and how many of them are in the page cache.
fn resident_total(files: &[PathBuf]) -> (u64, u64) {
    files.iter().filter_map(|f| resident(f).ok()).fold((0, 0), |(b, r), (fb, fr)| (b + fb, r + fr))
}

/// A file's length, and how many of its bytes are in the page cache.
fn resident(path: &Path) -> std::io::Result<(u64, u64)> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((0, 0));
    }
    // SAFETY: the map is only passed to mincore, which reads the page tables, never the
    // bytes; a file changed or truncated meanwhile cannot fault this process.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let page = 4096usize;
    let mut pages = vec![0u8; map.len().div_ceil(page)];
    // SAFETY: the pointer and length are the live mapping's, page aligned (mmap returns a page
    // aligned address), and `pages` holds one byte per page of it, as mincore requires.
    let rc =
        unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, map.len(), pages.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let cached = pages.iter().filter(|p| **p & 1 == 1).count() as u64;
    Ok((len, (cached * page as u64).min(len)))
}

/// Asks the kernel to drop a file's clean, unmapped pages from the page cache.
fn evict(path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path)?;
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is open for the
    // call's length.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `dir` is on tmpfs, whose pages are the files themselves and cannot be evicted.
    fn on_tmpfs(dir: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        // SAFETY: statfs writes only into the zeroed struct it is given; the path is a valid
        // NUL-terminated string for the call's length.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let rc = unsafe { libc::statfs(path.as_ptr(), &mut st) };
        rc == 0 && st.f_type as i64 == 0x0102_1994
    }

    #[test]
    fn a_synced_file_read_into_the_page_cache_is_evicted_by_asking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), 1 << 20);
        let (len, before) = resident(&path).unwrap();
        assert_eq!(len, 1 << 20);
        assert!(before <= len);
        evict(&path).unwrap();
        let (_, after) = resident(&path).unwrap();
        if !on_tmpfs(dir.path()) {
            assert!(after < len / 2, "{after} of {len} bytes still cached after eviction");
        }
        assert_eq!(index_files(dir.path()), vec![path]);
    }
}
