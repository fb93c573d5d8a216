//! Stamps the git revision into the binary (`/readyz` reports it), without running git: a
//! checkout's `.git/HEAD` names a ref whose file or packed-refs line holds the commit.

use std::fs;
use std::path::Path;

fn main() {
    let git = Path::new(".git");
    println!("cargo:rerun-if-changed=.git/HEAD");
    let Ok(head) = fs::read_to_string(git.join("HEAD")) else { return };
    let head = head.trim();
    let revision = match head.strip_prefix("ref: ") {
        None => Some(head.to_string()),
        Some(r) => {
            // Watching a file that does not exist makes cargo rerun this script, and rebuild
            // the crate, on every build; so only the files that are there are watched.
            for watched in [format!(".git/{r}"), ".git/packed-refs".to_string()] {
                if Path::new(&watched).exists() {
                    println!("cargo:rerun-if-changed={watched}");
                }
            }
            fs::read_to_string(git.join(r)).ok().map(|s| s.trim().to_string()).or_else(|| {
                fs::read_to_string(git.join("packed-refs")).ok().and_then(|p| {
                    p.lines()
                        .find(|l| l.ends_with(&format!(" {r}")))
                        .and_then(|l| l.split_whitespace().next().map(String::from))
                })
            })
        }
    };
    if let Some(rev) = revision.filter(|r| r.len() >= 7) {
        println!("cargo:rustc-env=MDVAULT_REVISION={}", &rev[..12.min(rev.len())]);
    }
}
