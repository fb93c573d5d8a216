//! Numbers that keep their text: which plain YAML scalars of a frontmatter block would lose
//! what they say if read as numbers, and the same block with those scalars quoted so the
//! parsed view reads them as the strings they were written as.
//!
//! A JSON client reads frontmatter through this view (`frontmatter::parse`), so a value that
//! a float cannot hold must not come back changed: `123456789012345678901234567890` is not
//! `1.2345678901234568e+29`, `0777` is not `777` (YAML 1.1 read it as octal, 1.2 as decimal:
//! only its text is unambiguous), and `1e400` is not infinity, nor a reason to drop every other
//! key of the block. The rewrite only adds quotes inside a line, so the parser's line numbers
//! still name the note's own lines. Edits never use it: they copy the note's bytes.

use std::borrow::Cow;

/// `yaml` with every plain numeric scalar that a number would not hold exactly quoted;
/// borrowed when there is none.
pub(crate) fn quote_inexact_numbers(yaml: &str) -> Cow<'_, str> {
    if !yaml.lines().any(|l| line_needs_quotes(l).is_some()) {
        return Cow::Borrowed(yaml);
    }
    let mut out = String::with_capacity(yaml.len() + 16);
    for piece in yaml.split_inclusive('\n') {
        let (line, ending) = match piece.strip_suffix('\n') {
            Some(l) => match l.strip_suffix('\r') {
                Some(l) => (l, "\r\n"),
                None => (l, "\n"),
            },
            None => (piece, ""),
        };
        out.push_str(&line_needs_quotes(line).unwrap_or_else(|| line.to_string()));
        out.push_str(ending);
    }
    Cow::Owned(out)
}

/// The line rewritten, when a scalar on it needs quotes.
fn line_needs_quotes(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start().len();
    let mut rest = &line[indent..];
    let mut head = line[..indent].to_string();
    // `- value`, `- key: value`
    while let Some(after) = rest.strip_prefix("- ") {
        head.push_str("- ");
        let pad = after.len() - after.trim_start().len();
        head.push_str(&after[..pad]);
        rest = &after[pad..];
    }
    // `key: value` (a plain key: quoted keys and complex keys are left alone).
    if let Some(at) = rest.find(": ")
        && !rest[..at].contains(['"', '\'', '[', '{', '#'])
    {
        head.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
    }
    let (value, comment) = split_comment(rest);
    let trimmed = value.trim_end();
    let trailing = &value[trimmed.len()..];
    let rewritten = if let Some(inner) = trimmed.strip_prefix('[').and_then(|v| v.strip_suffix(']'))
    {
        if inner.contains(['[', ']', '{', '}', '"', '\'']) {
            return None;
        }
        let mut changed = false;
        let items: Vec<String> = inner
            .split(',')
            .map(|item| {
                let t = item.trim();
                if needs_quotes(t) {
                    changed = true;
                    item.replacen(t, &format!("\"{t}\""), 1)
                } else {
                    item.to_string()
                }
            })
            .collect();
        if !changed {
            return None;
        }
        format!("[{}]", items.join(","))
    } else if needs_quotes(trimmed) {
        format!("\"{trimmed}\"")
    } else {
        return None;
    };
    Some(format!("{head}{rewritten}{trailing}{comment}"))
}

/// A value and its trailing ` # comment` (a `#` after whitespace starts one in YAML).
fn split_comment(s: &str) -> (&str, &str) {
    match s.find(" #") {
        Some(at) => (&s[..at], &s[at..]),
        None => (s, ""),
    }
}

/// True when `token` is a plain scalar YAML reads as a number that does not say what the
/// token says: an integer past 64 bits, a leading zero (`0777`, `0o17`), a decimal whose
/// digits a float does not keep, or one past a float's range.
fn needs_quotes(token: &str) -> bool {
    let unsigned = token.strip_prefix(['-', '+']).unwrap_or(token);
    if unsigned.is_empty() || !unsigned.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    if let Some(octal) = unsigned.strip_prefix("0o") {
        return !octal.is_empty() && octal.bytes().all(|b| b.is_ascii_digit());
    }
    if unsigned.bytes().all(|b| b.is_ascii_digit()) {
        // An integer: a leading zero is octal to one reader and decimal to another; past 64
        // bits it can only become a float.
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return true;
        }
        if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
            return false;
        }
        // Past 64 bits an integer becomes a float: fine when the float is that integer.
        return token.parse::<f64>().map_or(true, |v| format!("{:.0}", v.abs()) != unsigned);
    }
    if !is_decimal(unsigned) {
        return false;
    }
    let Ok(value) = token.parse::<f64>() else { return false };
    if !value.is_finite() {
        return true;
    }
    significant_digits(unsigned) != significant_digits(&format!("{:e}", value.abs()))
}

/// `123`, `1.5`, `.5`-less decimals with an optional exponent: what YAML's core schema reads as
/// a float.
fn is_decimal(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    !int.is_empty()
        && digits(int)
        && digits(frac)
        && exponent_ok
        && (mantissa.contains('.') || exponent.is_some())
}

/// The significant digits of a decimal (leading and trailing zeros of the digit string off).
fn significant_digits(s: &str) -> String {
    let mantissa = s.split(['e', 'E']).next().unwrap_or(s);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_a_float_or_integer_holds_are_left_alone() {
        for ok in [
            "42",
            "-7",
            "0",
            "3.5",
            "0.1",
            "1e10",
            "2.50",
            "18446744073709551615",
            "-9223372036854775808",
            "1.7976931348623157e308",
        ] {
            assert!(!needs_quotes(ok), "{ok}");
        }
        for word in ["abc", "1.2.3", "2026-01-02", "12:30", "0x1F", "", "-", "1e", ".5"] {
            assert!(!needs_quotes(word), "{word}");
        }
    }

    #[test]
    fn numbers_that_would_change_are_quoted() {
        for bad in [
            "123456789012345678901234567890",
            "18446744073709551617",
            "0777",
            "007",
            "0o17",
            "1e400",
            "-1e400",
            "3.14159265358979323846264338327950288",
            "0.30000000000000000000001",
        ] {
            assert!(needs_quotes(bad), "{bad}");
        }
    }

    #[test]
    fn only_the_scalar_gains_quotes_and_lines_keep_their_places() {
        let yaml = "\nid: 123456789012345678901234567890\nmode: 0777 # octal?\nok: 5\nhuge: 1e400\n\
                    list:\n  - 0777\n  - 8\nflow: [1, 0777, x]\nnested:\n  deep: 007\r\n";
        let out = quote_inexact_numbers(yaml);
        assert_eq!(
            out,
            "\nid: \"123456789012345678901234567890\"\nmode: \"0777\" # octal?\nok: 5\n\
             huge: \"1e400\"\nlist:\n  - \"0777\"\n  - 8\nflow: [1, \"0777\", x]\nnested:\n  \
             deep: \"007\"\r\n"
        );
        assert!(matches!(quote_inexact_numbers("a: 1\nb: [2, 3]\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn quoted_and_complex_values_are_not_touched() {
        for line in
            ["a: \"0777\"", "a: '0777'", "\"k: 1\": 0777", "a: [\"0777\", 1]", "a: {b: 0777}"]
        {
            assert!(line_needs_quotes(line).is_none(), "{line}");
        }
    }
}
