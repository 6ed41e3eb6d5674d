use super::*;
use crate::definition::{GrammarTool, RunContext};
use crate::testing::{check_round_trip, texts};
use proptest::prelude::*;

fn workspace(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgram-patch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("dir");
    std::fs::write(
        dir.join("src/main.py"),
        "def greet():\n    print(\"hi\")\n\ndef main():\n    greet()\n",
    )
    .expect("write");
    std::fs::write(dir.join("old.txt"), "bye\n").expect("write");
    dir
}

fn apply(dir: &std::path::Path, patch: &str) -> Result<Value, ToolError> {
    let ctx = RunContext {
        root: Some(dir.to_owned()),
        ..RunContext::default()
    };
    ApplyPatch.run(&ApplyPatch.parse(patch)?, &ctx)
}

/// Forms of Codex's `apply_patch.lark`: consecutive `@@` anchors narrowing the search, an
/// empty line as an empty context line, a rename without chunks, a trailing-space-only
/// context difference.
#[test]
fn nested_anchors_blank_context_lines_and_pure_renames_apply() {
    let dir = workspace("forms");
    std::fs::write(
        dir.join("src/k.py"),
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 1\n",
    )
    .expect("write");
    let patch = "*** Begin Patch\n*** Update File: src/k.py\n@@ class B:\n@@     def run(self):\n-        return 1\n+        return 2\n*** Update File: src/main.py\n     print(\"hi\")\n\n def main():   \n-    greet()\n+    greet()  \n*** Update File: old.txt\n*** Move to: renamed.txt\n*** Add File: src/c++/a b.txt\n+x\n*** End Patch";
    apply(&dir, patch).expect("applies");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/k.py")).expect("read"),
        "class A:\n    def run(self):\n        return 1\n\nclass B:\n    def run(self):\n        return 2\n"
    );
    assert!(
        std::fs::read_to_string(dir.join("src/main.py"))
            .expect("read")
            .contains("greet()  \n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("renamed.txt")).expect("moved"),
        "bye\n"
    );
    assert!(!dir.join("old.txt").exists());
    assert!(
        dir.join("src/c++/a b.txt").exists(),
        "any file name but an absolute or escaping one"
    );
}

#[test]
fn add_update_move_and_delete_apply_as_v4a_defines() {
    let dir = workspace("ok");
    let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+text\n*** Update File: src/main.py\n*** Move to: src/app.py\n def greet():\n-    print(\"hi\")\n+    print(\"hello\")\n@@ def main():\n-    greet()\n+    greet()\n+    greet()\n*** Delete File: old.txt\n*** End Patch";
    apply(&dir, patch).expect("applies");
    assert_eq!(
        std::fs::read_to_string(dir.join("docs/new.md")).expect("added"),
        "# New\ntext\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/app.py")).expect("moved"),
        "def greet():\n    print(\"hello\")\n\ndef main():\n    greet()\n    greet()\n"
    );
    assert!(!dir.join("src/main.py").exists() && !dir.join("old.txt").exists());
}

#[test]
fn context_is_matched_ignoring_surrounding_whitespace_when_not_exact() {
    let dir = workspace("loose");
    let patch = "*** Begin Patch\n*** Update File: src/main.py\n def greet():  \n-  print(\"hi\")\n+    print(\"hey\")\n*** End Patch";
    apply(&dir, patch).expect("applies");
    assert!(
        std::fs::read_to_string(dir.join("src/main.py"))
            .expect("read")
            .contains("print(\"hey\")")
    );
}

#[test]
fn bad_patches_are_refused_and_nothing_is_written() {
    let dir = workspace("bad");
    let before = std::fs::read_to_string(dir.join("src/main.py")).expect("read");
    // The first operation is fine, the second has no matching context: nothing happens.
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/main.py\n-nothing like this\n+y\n*** End Patch";
    let err = apply(&dir, patch).expect_err("refused");
    assert!(
        err.to_string()
            .contains("src/main.py, chunk 1: context not found"),
        "{err}"
    );
    assert!(!dir.join("a.txt").exists(), "all or nothing");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/main.py")).expect("read"),
        before
    );
    for escaping in ["../x.txt", "/etc/passwd", "src/../../x"] {
        let p = format!("*** Begin Patch\n*** Add File: {escaping}\n+x\n*** End Patch");
        assert!(apply(&dir, &p).is_err(), "{escaping}");
    }
    let _ = std::os::unix::fs::symlink("/tmp", dir.join("out"));
    let p = "*** Begin Patch\n*** Add File: out/evil.txt\n+x\n*** End Patch";
    assert!(matches!(apply(&dir, p), Err(ToolError::Input(m)) if m.contains("outside")));
    assert!(
        apply(
            &dir,
            "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch"
        )
        .is_err()
    );
    assert!(
        ApplyPatch
            .parse("*** Begin Patch\nrm -rf /\n*** End Patch")
            .is_err()
    );
}

#[test]
fn every_part_of_the_text_is_in_the_typed_input() {
    let base = "*** Begin Patch\n*** Update File: a\n x\n-y\n+z\n*** End Patch";
    let variants = [
        base,
        "*** Begin Patch\n*** Update File: b\n x\n-y\n+z\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n x\n-y\n+w\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n-x\n-y\n+z\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n*** Move to: c\n x\n-y\n+z\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n x\n-y\n+z\n*** End of File\n*** End Patch",
        "*** Begin Patch\n*** Update File: a\n@@ f\n x\n-y\n+z\n*** End Patch",
    ];
    for (i, a) in variants.iter().enumerate() {
        for b in &variants[i + 1..] {
            assert_ne!(
                ApplyPatch.parse(a).ok(),
                ApplyPatch.parse(b).ok(),
                "{a} vs {b}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    #[test]
    fn generated_texts_round_trip(text in texts(&ApplyPatch)) {
        check_round_trip(&ApplyPatch, &text);
    }
}
