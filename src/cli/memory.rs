//! `bench`'s memory figures: this process's resident memory, now and at its peak, and split by
//! where it lives (`/proc/self/smaps`): anonymous memory (the heap, thread stacks) and each
//! mapped file (the vectors file, the lexical index's segments, the binary). Linux only;
//! elsewhere every figure reads zero.

/// Mapped files listed one by one; the rest are summed.
const FILES_LISTED: usize = 6;

/// Peak and current resident memory of this process, in MiB (Linux).
pub(super) fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Resets this process's peak resident memory to its current value (Linux 4.0 and later;
/// elsewhere the peak stays cumulative), so a phase's peak is its own.
pub(super) fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Resident anonymous memory (heap, stacks, anything not backed by a file), in MiB, once the
/// allocator has returned its free pages.
pub(super) fn anonymous_mib() -> f64 {
    trim();
    split().0
}

/// Hands the allocator's free pages back to the system (glibc), so that anonymous memory
/// measured next is what is still allocated: loading the model frees buffers several times
/// the model's size, which would otherwise count as the model's.
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointer and only releases pages the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Anonymous resident MiB, and each mapped file's resident MiB (all its mappings summed),
/// largest first.
fn split() -> (f64, Vec<(String, f64)>) {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut anonymous = 0.0;
    let mut files: std::collections::HashMap<String, f64> = std::collections::HashMap::new();
    let mut current: Option<String> = None;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: range, permissions, offset, device, inode, then its path
            // (none for anonymous memory, `[heap]` or `[stack]` for the kernel's own).
            let path = fields.skip(4).collect::<Vec<_>>().join(" ");
            current = (!path.is_empty() && !path.starts_with('[')).then_some(path);
        } else if first == "Rss:" {
            let mib = fields.next().and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 1024.0;
            match &current {
                Some(path) => *files.entry(path.clone()).or_default() += mib,
                None => anonymous += mib,
            }
        }
    }
    let mut files: Vec<(String, f64)> = files.into_iter().collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (anonymous, files)
}

/// The resident memory now (free heap pages returned first), by part: anonymous memory (the
/// heap with the model's weights in it, stacks), the largest mapped files (paths under `root`
/// shown relative to it) and the rest of them summed.
pub(super) fn report(root: &std::path::Path) -> Vec<(String, f64)> {
    trim();
    let (anonymous, files) = split();
    let name = |p: &str| {
        std::path::Path::new(p)
            .strip_prefix(root)
            .map_or_else(|_| p.to_string(), |rel| rel.display().to_string())
    };
    let mut out = vec![("anonymous (heap with the model, stacks)".to_string(), anonymous)];
    out.extend(files.iter().take(FILES_LISTED).map(|(p, mib)| (name(p), *mib)));
    let others = files.len().saturating_sub(FILES_LISTED);
    let other: f64 = files.iter().skip(FILES_LISTED).map(|f| f.1).sum();
    out.push((format!("{others} other mapped files"), other));
    out
}

/// One line of the report: the total, then each part, then what loading the model added to
/// the anonymous part (`model_mib`, measured when it loaded: its weights, and whatever of its
/// loading the allocator kept).
pub(super) fn line(parts: &[(String, f64)], model_mib: f64) -> String {
    let total: f64 = parts.iter().map(|p| p.1).sum();
    let each: Vec<String> = parts.iter().map(|(what, mib)| format!("{what} {mib:.0}")).collect();
    format!(
        "resident {total:.0} MiB = {} (MiB); loading the model added {model_mib:.0} MiB of anonymous memory",
        each.join(" + ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_adds_up_to_the_resident_total() {
        let (anonymous, files) = split();
        let mapped: f64 = files.iter().map(|f| f.1).sum();
        let (_, rss) = memory_mib();
        if cfg!(target_os = "linux") {
            assert!(anonymous > 0.0 && mapped > 0.0, "{anonymous} + {mapped}");
            // smaps and status are read a moment apart; a few MiB may move between them.
            assert!(
                (anonymous + mapped - rss).abs() < 0.1 * rss + 8.0,
                "{anonymous} + {mapped} vs {rss}"
            );
        }
    }
}
