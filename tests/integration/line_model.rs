//! One document read by every line scanner: headings, links, the chunker, callouts and
//! index.md must agree on which lines are code, because they all classify lines through the
//! shared line model.

use mdvault::index::chunker::{ChunkConfig, chunk_note};
use mdvault::upkeep::callouts;
use mdvault::upkeep::indexmd::Entry;
use mdvault::vault::headings;
use mdvault::vault::links;

/// Code in every form the model knows (a fence four columns in, fences in a callout and in a
/// list item, a plain fence, a code span), each holding a heading, a link and a callout, and
/// the real ones around them.
const NOTE: &str = "\
---
title_note: \"[[InFrontmatter]]\"
---
# Title

    indented code comes first.

Intro with [[Real]]. %% hidden %%
    ```
# Shown
[[Lazy]]
    ```

> [!note] Callout
> ```
> # heading in quoted code
> [[InQuotedFence]]
> > [!bug] not a callout
> ```
> [[InCallout]]

- step

    ```sh
    # comment in a list item's fence
    [[InListFence]] %% kept %%
    ```

```md
# heading in fence
> [!bug] fenced callout
[[InFence]] %% literal %%
```

## After
[[AfterLink]] `[[InSpan]]`
";

#[test]
fn every_scanner_agrees_on_which_lines_are_code() {
    let found: Vec<(String, usize)> =
        headings::headings(NOTE).into_iter().map(|h| (h.text, h.line)).collect();
    assert_eq!(
        found,
        [("Title".to_string(), 4), ("Shown".to_string(), 10), ("After".to_string(), 35)]
    );

    let targets: Vec<String> = links::links(NOTE).into_iter().map(|l| l.target).collect();
    assert_eq!(targets, ["InFrontmatter", "Real", "Lazy", "InCallout", "AfterLink"]);

    let found: Vec<(String, usize)> =
        callouts::parse("n.md", NOTE).into_iter().map(|c| (c.kind, c.line)).collect();
    assert_eq!(found, [("note".to_string(), 14)]);
    let body = &callouts::parse("n.md", NOTE)[0].body;
    assert!(body.contains("> [!bug] not a callout"), "{body}");

    let chunks = chunk_note("n.md", NOTE, &ChunkConfig::DEFAULT).chunks;
    let text: String = chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
    assert!(!text.contains("hidden"), "{text}");
    assert!(text.contains("[[InListFence]] %% kept %%"), "{text}");
    assert!(text.contains("[[InFence]] %% literal %%"), "{text}");
    for chunk in &chunks {
        assert!(
            ["Title", "Shown", "Shown > After"].contains(&chunk.breadcrumb.as_str()),
            "{}",
            chunk.breadcrumb
        );
    }

    let entry = Entry::from_text("n.md", NOTE);
    assert_eq!(
        (entry.title.as_str(), entry.description.as_str()),
        ("Title", "Intro with [[Real]].")
    );
}
