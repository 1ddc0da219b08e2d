//! The marker comments of a project's user-owned files, and the structural edits at them: the
//! way `create hook` and `create patch` add to files the user owns without clobbering them.

use anyhow::anyhow;

/// The marker in `src/main.rs` above which `create hook` registers handlers.
pub const REGISTER_MARKER: &str = "// capi-ext:register";
/// The marker in `src/hooks/mod.rs` above which `create hook` declares modules.
pub const MODULES_MARKER: &str = "// capi-ext:modules";
/// The marker in a GeneratePatches handler above which `create patch` lists patches.
pub const PATCHES_MARKER: &str = "// capi-ext:patches";

/// Adds `line` to the sorted block of `pub mod` lines just above `marker` (rustfmt keeps
/// module declarations sorted, so the scaffold does too).
pub fn insert_module(text: &str, marker: &str, line: &str) -> anyhow::Result<String> {
    let pos = text
        .find(marker)
        .ok_or_else(|| anyhow!("marker comment `{marker}` not found"))?;
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let before: Vec<&str> = text[..line_start].lines().collect();
    let block_start = before
        .iter()
        .rposition(|l| !l.starts_with("pub mod "))
        .map_or(0, |i| i + 1);
    let mut block: Vec<String> = before[block_start..]
        .iter()
        .map(|l| l.to_string())
        .collect();
    block.push(line.to_string());
    block.sort();
    let mut out: Vec<String> = before[..block_start]
        .iter()
        .map(|l| l.to_string())
        .collect();
    out.extend(block);
    Ok(out.join("\n") + "\n" + &text[line_start..])
}

/// Inserts `lines` before the line holding `marker`, keeping its indentation.
pub fn insert_before(text: &str, marker: &str, lines: &[String]) -> anyhow::Result<String> {
    let pos = text
        .find(marker)
        .ok_or_else(|| anyhow!("marker comment `{marker}` not found"))?;
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let mut out =
        String::with_capacity(text.len() + lines.iter().map(|l| l.len() + 1).sum::<usize>());
    out.push_str(&text[..line_start]);
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&text[line_start..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_stay_sorted() {
        let out = insert_module(
            "//! x\n\npub mod a;\npub mod c;\n// m\n",
            "// m",
            "pub mod b;",
        )
        .unwrap();
        assert_eq!(out, "//! x\n\npub mod a;\npub mod b;\npub mod c;\n// m\n");
        let out = insert_module("//! x\n\n// m\n", "// m", "pub mod b;").unwrap();
        assert_eq!(out, "//! x\n\npub mod b;\n// m\n");
    }

    #[test]
    fn inserts_above_the_marker() {
        let out = insert_before("a\n    // m\nb\n", "// m", &["    x".into()]).unwrap();
        assert_eq!(out, "a\n    x\n    // m\nb\n");
        assert!(insert_before("a\n", "// m", &[]).is_err());
    }
}
